import CLMDB
import Foundation

/// What an import stored.
///
/// ```swift
/// let summary = try store.importObjects(entity: "Person", jsonLines: data)
/// print("\(summary.inserted) new, \(summary.updated) updated")
/// ```
public struct ImportSummary: Sendable, Equatable {
    /// Objects that were not stored before.
    ///
    /// ```swift
    /// summary.inserted
    /// ```
    public let inserted: Int
    /// Stored objects the import replaced (same id, or same `upsertBy` key).
    ///
    /// ```swift
    /// summary.updated
    /// ```
    public let updated: Int
}

extension Store {
    /// Stores one object per line of `jsonLines` (JSON lines, as `query(entity:...)`,
    /// `dump` and `coffer export` write them) in the entity stored as `entity`, from the
    /// schema catalog alone: what `coffer import` runs.
    ///
    /// ```swift
    /// let lines = Data("""
    ///     {"id": 1, "name": "Ada", "age": 36}
    ///     {"name": "Grace", "age": 45}
    ///     """.utf8)
    /// let summary = try store.importObjects(entity: "Person", jsonLines: lines)
    /// // Ada is stored under id 1 (replacing any object 1); Grace under a new id.
    /// ```
    ///
    /// Rules:
    /// - Everything happens in one write transaction: a refused line stores nothing of the
    ///   import, and the store stays as it was. Empty lines are skipped.
    /// - Each line is checked against the catalog's types before it is written (see the
    ///   README's import section: ids, dates in ISO 8601, base64 data, links as ids,
    ///   to-many relations as arrays of ids, which properties may be left out).
    /// - Objects are written by the same path as `Box.put`: indexes, unique constraints
    ///   (with the property's conflict strategy), full-text indexes, relation rows and
    ///   change notifications are kept. A line with an id stores the object under that id,
    ///   replacing a stored one; without an id it gets a new one. `@CreatedAt`/`@UpdatedAt`
    ///   values in the line are kept; left out, they are stamped as a put stamps them.
    /// - With `upsertBy`, the stored object with the same value of that indexed property is
    ///   replaced (the key decides, ids in the lines are ignored), as `Box.upsert` does.
    /// - `progress` is called with the lines done and the lines in all, now and then.
    ///
    /// - Throws: ``CofferError/invalidImport(entity:line:reason:)`` naming the line (from 1)
    ///   and the property and value at fault; ``CofferError/importFailed(entity:line:cause:)``
    ///   when a line's write fails (`cause` a unique violation, an ambiguous upsert key);
    ///   ``CofferError/unknownEntity(name:path:known:)`` when the store has no entity
    ///   `entity` (see ``copySchema(of:from:)``); ``CofferError/invalidUpsertKey(entity:property:problem:)``
    ///   when `upsertBy` is not an indexed property of it.
    @discardableResult
    public func importObjects(entity: String, jsonLines: Data, upsertBy: String? = nil,
                              progress: ((_ done: Int, _ total: Int) -> Void)? = nil) throws -> ImportSummary {
        let lines = Self.lineRanges(jsonLines)
        try openTables()   // tables created since the store opened, by any process
        return try performWrite { transaction in
            let target = try importTarget(entity, upsertBy: upsertBy, in: transaction)
            var inserted = 0, updated = 0
            var lastReport = 0
            progress?(0, lines.count)
            for (offset, range) in lines.enumerated() {
                let replaced = try Self.refusingLine(range.lineNumber, of: entity) {
                    try importLine(jsonLines[range.bytes], lineNumber: range.lineNumber, into: target, in: transaction)
                }
                if replaced { updated += 1 } else { inserted += 1 }
                if offset + 1 - lastReport >= 1000 || offset + 1 == lines.count {
                    lastReport = offset + 1
                    progress?(offset + 1, lines.count)
                }
            }
            return ImportSummary(inserted: inserted, updated: updated)
        }
    }

    /// The entity an import writes, read from the catalog (retired properties included),
    /// and the index of its `upsertBy` key.
    private func importTarget(_ entity: String, upsertBy: String?, in transaction: Transaction) throws -> ImportTarget {
        let stored = try catalogEntity(named: entity, in: transaction)
        let schema = EntitySchema(catalog: stored, includingRetired: true)
        guard let binding = try makeCatalogBinding(schema, in: transaction) else {
            throw CofferError.unknownEntity(name: entity, path: path, known: [])
        }
        guard let upsertBy else { return ImportTarget(schema: schema, binding: binding, upsertIndex: nil) }
        guard let position = schema.properties.firstIndex(where: { $0.storedName == upsertBy && !$0.flags.contains(.id) }),
              let index = binding.indexes.first(where: { $0.position == position }) else {
            throw CofferError.invalidUpsertKey(entity: entity, property: upsertBy, problem: .notIndexed)
        }
        return ImportTarget(schema: schema, binding: binding, upsertIndex: index)
    }

    /// Checks one line against the schema and stores its object (by the same path as
    /// `Box.put`) and its relations; returns whether it replaced a stored object.
    private func importLine(_ bytes: Data, lineNumber: Int, into target: ImportTarget, in transaction: Transaction) throws -> Bool {
        let node = try bytes.withUnsafeBytes { try JSONParser.parse(Array($0)) }
        let object: ImportedObject
        do throws(ImportProblem) {
            object = try ImportedObject(node, schema: target.schema)
        } catch {
            throw CofferError.invalidImport(entity: target.schema.name, line: lineNumber, reason: error.message)
        }
        let schema = target.schema
        let encode = { (writer: inout RecordWriter, stamps: PutStamps?) in
            object.encode(to: &writer, stamps: stamps, schema: schema)
        }
        var id: Id = object.id ?? 0
        if let upsertIndex = target.upsertIndex {
            id = try transaction.upsertTarget(by: upsertIndex, binding: target.binding, encode: encode) ?? 0
        }
        let replaced = try transaction.storeObject(id: &id, binding: target.binding, encode: encode)
        for relation in object.relations {
            guard let tables = target.binding.relationTables[relation.position] else { continue }
            if try transaction.replaceRelations(tables, owner: id, targets: relation.targets), target.binding.syncTables != nil {
                try transaction.recordSyncedRelationChange(id, field: tables.field, binding: target.binding)
            }
        }
        return replaced
    }

    /// Runs `body` for the line `lineNumber` of an import of `entity`: JSON it cannot parse
    /// becomes ``CofferError/invalidImport(entity:line:reason:)``, a failed write
    /// ``CofferError/importFailed(entity:line:cause:)`` keeping the typed cause; failures
    /// of the store rather than of the line (a full map, which the write retries; damage;
    /// a closed store) stay as they are.
    private static func refusingLine<T>(_ lineNumber: Int, of entity: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as JSONParser.Failure {
            throw CofferError.invalidImport(entity: entity, line: lineNumber, reason: "the line is not valid JSON: \(error)")
        } catch let error as CofferError {
            switch error {
            case .invalidImport, .importFailed, .storage, .storeClosed, .readOnly, .misuse, .damagedStore, .createdByOtherProcess:
                throw error
            default: throw CofferError.importFailed(entity: entity, line: lineNumber, cause: error)
            }
        }
    }

    /// Registers the entity stored as `entity` in `source` in this store, with the same
    /// properties (retired ones included), types, indexes, unique constraints, full-text
    /// indexes and relations, and no objects: what an import into a new store needs
    /// (`coffer import --schema-from`). The app's first write with its own build then
    /// reconciles it as usual.
    ///
    /// ```swift
    /// let backup = try Store(directory: "/tmp/restore")
    /// try backup.copySchema(of: "Person", from: Store(directory: appStore, options: .init(readOnly: true)))
    /// try backup.importObjects(entity: "Person", jsonLines: exported)
    /// ```
    ///
    /// - Throws: ``CofferError/unknownEntity(name:path:known:)`` when `source` has no such
    ///   entity; ``CofferError/misuse(_:)`` (`.entityAlreadyStored`) when this store already
    ///   has one (import into it directly).
    public func copySchema(of entity: String, from source: Store) throws {
        try source.openTables()
        let original: CatalogEntity = try source.performRead { transaction in try source.catalogEntity(named: entity, in: transaction) }
        try performWrite { transaction in
            if let catalog = catalogDatabase,
               try Catalog.load(CatalogEntity.self, key: Catalog.entityKey(entity), dbi: catalog, in: transaction) != nil {
                throw CofferError.misuse(.entityAlreadyStored(entity: entity, path: path))
            }
            _ = try register(EntitySchema(catalog: original, includingRetired: true), in: transaction)
            transaction.incomingRelations.forget()  // the new entity may link to others
        }
        try openTables()
    }

    /// The catalog entry of the entity stored as `name`.
    ///
    /// - Throws: ``CofferError/unknownEntity(name:path:known:)`` naming the stored entities when
    ///   there is none called `name`.
    func catalogEntity(named name: String, in transaction: Transaction) throws -> CatalogEntity {
        let entities = try catalogDatabase.map { try Catalog.entities(dbi: $0, in: transaction) } ?? []
        guard let entity = entities.first(where: { $0.name == name }) else {
            throw CofferError.unknownEntity(name: name, path: path, known: entities.map(\.name))
        }
        return entity
    }

    /// The non-empty lines of `data` with their numbers (from 1), split at `\n` (a `\r`
    /// before it is JSON whitespace).
    static func lineRanges(_ data: Data) -> [(lineNumber: Int, bytes: Range<Data.Index>)] {
        var ranges: [(Int, Range<Data.Index>)] = []
        var start = data.startIndex
        var lineNumber = 1
        func add(_ end: Data.Index) {
            if data[start..<end].contains(where: { !($0 == 0x20 || $0 == 0x09 || $0 == 0x0D) }) {
                ranges.append((lineNumber, start..<end))
            }
        }
        while let newline = data[start...].firstIndex(of: 0x0A) {
            add(newline)
            start = data.index(after: newline)
            lineNumber += 1
        }
        add(data.endIndex)
        return ranges
    }
}

/// The entity an import writes: its catalog schema and binding, and the index of the
/// `upsertBy` key when there is one.
private struct ImportTarget {
    let schema: EntitySchema
    let binding: EntityBinding
    let upsertIndex: IndexBinding?
}
