import CLMDB
import Foundation

/// The result of ``Store/verify(progress:)`` or ``Store/verify(directory:)``.
///
/// ```swift
/// let report = try store.verify()
/// if !report.isIntact { report.problems.forEach { print($0) } }
/// ```
public struct VerificationReport: Sendable, CustomStringConvertible {
    /// The store directory checked.
    ///
    /// ```swift
    /// print(report.path)
    /// ```
    public let path: String
    /// Every problem found, in words (at most 100 per check); empty when intact.
    ///
    /// ```swift
    /// for problem in report.problems { print(problem) }
    /// ```
    public let problems: [String]
    /// Pages of the data file read by the structural check.
    ///
    /// ```swift
    /// print(report.pagesChecked)
    /// ```
    public let pagesChecked: Int
    /// Objects whose records, index entries and relation rows were checked (0 for a
    /// structural check only).
    ///
    /// ```swift
    /// print(report.objectsChecked)
    /// ```
    public let objectsChecked: Int

    /// Whether no problem was found.
    ///
    /// ```swift
    /// guard report.isIntact else { restoreBackup() }
    /// ```
    public var isIntact: Bool { problems.isEmpty }

    /// A summary line, then one line per problem.
    ///
    /// ```swift
    /// print(report)
    /// ```
    public var description: String {
        let head = isIntact ? "intact" : "\(problems.count) problem\(problems.count == 1 ? "" : "s")"
        return (["\(path): \(head) (\(pagesChecked) pages, \(objectsChecked) objects checked)"] + problems.map { "  " + $0 })
            .joined(separator: "\n")
    }
}

extension Store {
    /// Checks the structure of the data file in `directory` without opening it with LMDB:
    /// page headers, the branch/leaf structure, key order, overflow chains, the free list
    /// and the recorded counts, reading the file with bounds checks. Use it before opening a
    /// file that may be damaged: LMDB trusts its pages and can crash on damaged ones.
    ///
    /// ```swift
    /// let report = try Store.verify(directory: "backup/app.coffer")
    /// guard report.isIntact else { print(report); return }
    /// let store = try Store(directory: "backup/app.coffer")
    /// ```
    ///
    /// Another process may commit while the file is read (its new pages reuse free ones), so
    /// problems count only when two checks of the same committed state agree.
    ///
    /// - Throws: ``CofferError/storage(code:message:)`` when there is no data file, or when
    ///   other processes commit so often that no committed state could be checked twice.
    public static func verify(directory: String) throws -> VerificationReport {
        let path = URL(fileURLWithPath: directory).standardizedFileURL.path
        var previous: UInt64?
        for _ in 0..<5 {
            let result = try FileVerifier.verify(file: path + "/data.mdb")
            if result.problems.isEmpty || previous == result.transactionId {
                return VerificationReport(path: path, problems: result.problems, pagesChecked: result.pages, objectsChecked: 0)
            }
            previous = result.transactionId
        }
        throw CofferError.storage(code: .system(.busy), message: "cannot verify \(path): other processes commit too often; retry when the store is quieter")
    }

    /// Checks the whole store: the data file's structure (as ``verify(directory:)``), then,
    /// when that is intact, every catalog entry, every record (it must parse), every index
    /// (one entry per object, with the key its record gives, and nothing else) and every
    /// many-to-many relation (both directions agree, both ends exist). Reads one snapshot;
    /// writes nothing.
    ///
    /// ```swift
    /// let report = try store.verify { checked in print("\(checked) objects checked") }
    /// print(report.isIntact ? "intact" : report.description)
    /// ```
    ///
    /// `progress`, when given, is called with the number of objects checked so far, every
    /// 1,000 objects (what `coffer check` shows on standard error).
    ///
    /// Inside `store.read { }` it checks the latest committed state (which may be newer than
    /// the closure's snapshot); inside `store.write { }` it throws
    /// ``CofferError/misuse(_:)`` (`.verifyInsideWrite`): the write's own changes are not on disk yet.
    public func verify(progress: ((_ objectsChecked: Int) -> Void)? = nil) throws -> VerificationReport {
        if Transaction.current(for: self)?.isWrite == true {
            throw CofferError.misuse(.verifyInsideWrite(path: path))
        }
        try openTables()
        // The structural walk must check the meta page of a snapshot that a read
        // transaction pins (its pages cannot be reused meanwhile): retry when a commit
        // slipped in between.
        for _ in 0..<5 {
            let outcome: VerificationReport? = try performLatestRead { transaction in
                let file = try FileVerifier.verify(file: path + "/data.mdb")
                guard file.transactionId == UInt64(transaction.snapshotId) else { return nil }
                guard file.problems.isEmpty else {
                    return VerificationReport(path: path, problems: file.problems, pagesChecked: file.pages, objectsChecked: 0)
                }
                var checker = ContentChecker(store: self, transaction: transaction, progress: progress)
                try checker.run()
                return VerificationReport(path: path, problems: checker.problems, pagesChecked: file.pages, objectsChecked: checker.objects)
            }
            if let outcome { return outcome }
        }
        throw CofferError.storage(code: .system(.busy), message: "cannot verify \(path): other processes commit too often; retry when the store is quieter")
    }
}

/// The content checks of `Store.verify()`, on one read snapshot and the catalog alone.
struct ContentChecker {
    let store: Store
    let transaction: Transaction
    private(set) var problems: [String] = []
    private(set) var objects = 0
    let progress: ((Int) -> Void)?

    init(store: Store, transaction: Transaction, progress: ((Int) -> Void)? = nil) {
        self.store = store
        self.transaction = transaction
        self.progress = progress
    }

    mutating func report(_ problem: String) {
        if problems.count < 100 { problems.append(problem) }
    }

    mutating func run() throws {
        guard let catalog = store.catalogDatabase else { return }
        var entities: [CatalogEntity] = []
        try transaction.withCursor(catalog, "reading the schema catalog") { cursor in
            let prefix = Array("entity/".utf8)
            var current = try cursor.seek(prefix)
            while let entry = current, entry.key.starts(with: prefix) {
                do {
                    entities.append(try Catalog.decodeEntity(entry.value, key: entry.key))
                } catch {
                    report("\(error)")
                }
                current = try cursor.next()
            }
        }
        for entity in entities { try check(entity) }
        try checkOutbox(entities: entities)
    }

    /// Checks one entity: its records, each index and full-text index against what the
    /// records imply, its id sequence, and its relation tables.
    private mutating func check(_ entity: CatalogEntity) throws {
        guard let table = store.storedDatabase(Catalog.tableName(entity.id)) else { return }
        let (indexes, textIndexes) = indexesToCheck(of: entity)
        let walked = try checkRecords(of: entity, table: table, indexes: indexes, textIndexes: textIndexes)
        for index in indexes {
            try checkIndex(index, of: entity, against: walked.expected[index.storedId] ?? [])
        }
        for index in textIndexes {
            try checkTextIndex(index, of: entity, against: walked.expectedText[index.storedId] ?? TextIndexContents())
        }
        checkSequence(of: entity, storedIds: walked.ids)
        try checkRelations(of: entity, storedIds: walked.ids)
        try checkSyncIds(of: entity, storedIds: walked.ids)
    }

    /// The entity's value and full-text indexes this store has opened, as bindings built
    /// from the catalog alone.
    private func indexesToCheck(of entity: CatalogEntity) -> ([IndexBinding], [TextIndexBinding]) {
        let indexed = entity.properties.filter {
            PropertyFlags(rawValue: $0.flags).contains(.indexed)
                && store.storedDatabase(IndexBinding.databaseName(entity: entity.id, property: $0.id)) != nil
        }
        let indexes = indexed.map { property in
            IndexBinding(position: -1, storedId: property.id,
                         property: PropertySchema(name: property.name, type: property.type, swiftType: property.swiftType,
                                                  flags: PropertyFlags(rawValue: property.flags)),
                         database: store.storedDatabase(IndexBinding.databaseName(entity: entity.id, property: property.id)) ?? 0,
                         createdInTransaction: 0)
        }
        // Full-text indexes: every entry the records imply (postings, lengths, statistics).
        let textIndexes = entity.properties.compactMap { property -> TextIndexBinding? in
            guard let name = property.tokenizer, let tokenizer = TextTokenizer(rawValue: name),
                  let database = store.storedDatabase(TextIndexBinding.databaseName(entity: entity.id, property: property.id)) else { return nil }
            return TextIndexBinding(position: -1, storedId: property.id, entityName: entity.name, propertyName: property.name, tokenizer: tokenizer, database: database)
        }
        return (indexes, textIndexes)
    }

    /// What a walk of the entity's records found: the stored ids, and the index entries
    /// (`value ‖ id`, per index property id) and full-text contents the records imply.
    private struct WalkedRecords {
        var ids = Set<Id>()
        var expected: [UInt16: Set<[UInt8]>] = [:]
        var expectedText: [UInt16: TextIndexContents] = [:]
    }

    /// Walks the entity's records, reporting damaged ones, and collects what they imply.
    private mutating func checkRecords(of entity: CatalogEntity, table: MDB_dbi, indexes: [IndexBinding],
                                       textIndexes: [TextIndexBinding]) throws -> WalkedRecords {
        var walked = WalkedRecords()
        try transaction.withCursor(table, "checking \(entity.name)") { cursor in
            var current = try cursor.first()
            while let entry = current {
                objects += 1
                if objects % 1_000 == 0 { progress?(objects) }
                guard let id = IdKey(entry.key)?.id else {
                    report("\(entity.name): a key of \(entry.key.count) bytes is not an id")
                    current = try cursor.next()
                    continue
                }
                walked.ids.insert(id)
                let record = RecordFields(bytes: entry.value, entity: entity.name, id: id)
                do {
                    try record.validate()
                    try record.forEach { storedId, field in
                        if let problem = FieldPayload.problem(field) { throw record.damage("property id \(storedId) holds \(problem)") }
                    }
                    for index in indexes {
                        let keys = try index.key(in: record)
                        for var key in index.isElementIndex ? IndexKeySet.keys(keys) : [keys] {
                            key += withUnsafeBytes(of: id.bigEndian) { Array($0) }
                            walked.expected[index.storedId, default: []].insert(key)
                        }
                    }
                    for index in textIndexes {
                        walked.expectedText[index.storedId, default: TextIndexContents()].add(id, try index.postings(in: record))
                    }
                } catch {
                    report("\(error)")
                }
                current = try cursor.next()
            }
        }
        return walked
    }

    /// Compares an index with the entries the records imply (`expected`).
    private mutating func checkIndex(_ index: IndexBinding, of entity: CatalogEntity, against expected: Set<[UInt8]>) throws {
        var wanted = expected
        try transaction.withCursor(index.database, "checking the index on \(entity.name).\(index.property.name)") { cursor in
            var current = try cursor.first()
            while let entry = current {
                let key = Array(entry.key)
                if wanted.remove(key) == nil {
                    let owner = entry.key.count >= 9 ? "\(Id(bigEndian: UnsafeRawBufferPointer(rebasing: entry.key.suffix(8)).loadUnaligned(as: UInt64.self)))" : "no id"
                    report("\(entity.name).\(index.property.name): an index entry (object \(owner)) matches no record")
                }
                current = try cursor.next()
            }
        }
        if !wanted.isEmpty {
            report("\(entity.name).\(index.property.name): \(wanted.count) object(s) missing from the index")
        }
    }

    /// Compares a full-text index with the postings, lengths and statistics the records imply.
    private mutating func checkTextIndex(_ index: TextIndexBinding, of entity: CatalogEntity, against wanted: TextIndexContents) throws {
        let stored: TextIndexContents
        do {
            stored = try transaction.textIndexContents(index)
        } catch let error as CofferError {
            report("\(entity.name).\(index.propertyName): \(error)")
            return
        }
        var missing = 0
        var wrong = 0
        for (term, postings) in wanted.postings {
            guard let found = stored.postings[term] else {
                missing += postings.count
                continue
            }
            if found != postings { wrong += 1 }
        }
        let extra = stored.postings.keys.filter { wanted.postings[$0] == nil }.count
        if missing > 0 {
            report("\(entity.name).\(index.propertyName): \(missing) full-text posting\(missing == 1 ? " is" : "s are") missing")
        }
        if wrong + extra > 0 {
            report("\(entity.name).\(index.propertyName): the postings of \(wrong + extra) term\(wrong + extra == 1 ? " do" : "s do") not match the records")
        }
        if stored.lengths != wanted.lengths || stored.stats != wanted.stats {
            report("\(entity.name).\(index.propertyName): the full-text length entries or statistics do not match the records")
        }
    }

    /// Checks that the id sequence is not below a stored id.
    private mutating func checkSequence(of entity: CatalogEntity, storedIds ids: Set<Id>) {
        // New ids are handed out above the sequence: it must not be below a stored id
        // (explicit ids from `explicitIdCeiling` up are stored as given and leave it alone).
        if let catalog = store.catalogDatabase, let highest = ids.filter({ $0 < Transaction.explicitIdCeiling }).max() {
            do {
                let sequence = try Catalog.sequence(entity.id, dbi: catalog, in: transaction, entity: entity.name)
                if sequence < highest {
                    report("\(entity.name): the id sequence (\(sequence)) is below the stored id \(highest)")
                }
            } catch {
                report("\(error)")
            }
        }
    }

    /// Checks that each relation's two directions agree and name stored owners.
    private mutating func checkRelations(of entity: CatalogEntity, storedIds ids: Set<Id>) throws {
        for property in entity.properties where PropertyFlags(rawValue: property.flags).contains(.toMany) {
            let names = RelationTables.names(entity: entity.id, property: property.id)
            guard let forward = store.storedDatabase(names.forward), let reverse = store.storedDatabase(names.reverse) else { continue }
            let pairs = try relationPairs(forward)
            let reversed = try relationPairs(reverse)
            if Set(pairs.map { [$0.0, $0.1] }) != Set(reversed.map { [$0.1, $0.0] }) {
                report("\(entity.name).\(property.name): the relation's two directions disagree")
            }
            for (owner, _) in pairs where !ids.contains(owner) {
                report("\(entity.name).\(property.name): a relation row names object \(owner), which is not stored")
                break
            }
        }
    }

    private mutating func relationPairs(_ table: MDB_dbi) throws -> [(Id, Id)] {
        var pairs: [(Id, Id)] = []
        try transaction.withCursor(table, "checking a relation") { cursor in
            var current = try cursor.first()
            while let entry = current {
                if entry.key.count == 16 {
                    pairs.append((Id(bigEndian: entry.key.loadUnaligned(as: UInt64.self)),
                                  Id(bigEndian: entry.key.loadUnaligned(fromByteOffset: 8, as: UInt64.self))))
                } else {
                    report("a relation key of \(entry.key.count) bytes is not two ids")
                }
                current = try cursor.next()
            }
        }
        return pairs
    }
}
