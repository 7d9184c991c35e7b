import Foundation
import Testing

/// The folders of `Sources/Coffer` are layers, and a layer names only the types of the layers
/// below it: a file that names a type declared in a folder above its own is an upward
/// reference, and every upward reference that remains is listed in ``allowed`` with its
/// reason. A new one fails this test; so does a listed one that no longer exists (delete
/// its line).
///
/// The analysis reads the sources, not the compiler's index: a folder depends on another
/// when one of its files names (outside comments and string text) a type declared at the top
/// level of a file in the other. Names declared in more than one folder, or nested in a type
/// anywhere (`Element`, `Key`, `Node`, `Failure`, ...), are left out: the text cannot tell
/// which one a file means. Calls of members that a layer adds to a lower type (a
/// `Transaction+X.swift` extension) are not seen either.
@Suite struct LayerDependencyTests {
    static let sources = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources").appendingPathComponent("Coffer")

    /// The layers, lowest first: each may name the types of the ones before it.
    ///
    /// `Transaction` (Storage) is the hub: one LMDB transaction, which each layer above
    /// extends with `Transaction+X.swift` and whose per-transaction state it keeps in a type
    /// of its own, stored inline in the transaction. `Store` is the facade at the top,
    /// composed of the environment, the schema registry and the commit publisher.
    static let layers = [
        "Errors", "Storage", "Encoding", "Schema", "Mutation", "Entity", "Document", "Box",
        "Query", "Relations", "FullText", "Sync", "Observation", "Interchange", "Selector", "SQL",
        "Annotations", "Store",
    ]

    /// The upward references that remain, as "Folder -> Folder: Type", each with its reason.
    static let allowed: [(reference: String, reason: String)] = [
        ("Errors -> Storage: Id", "error cases name the record they are about; Id is a UInt64 alias"),
        ("Errors -> Encoding: FieldDescription", "messages quote strings as describe() and exports do (FieldDescription.quoted)"),
        // The transaction hub: the state of each layer is stored inline (no indirection
        // or allocation per transaction on the put and get paths).
        ("Storage -> Encoding: RecordBuffer", "the store's record buffer, held unowned so that a put reaches it without a retain"),
        ("Storage -> Schema: TransactionBindings", "the bindings a transaction resolved, stored inline"),
        ("Storage -> Mutation: ChangeLog", "the change log of a write, stored inline"),
        ("Storage -> Mutation: IdStates", "the id allocation state of a write, stored inline"),
        ("Storage -> Mutation: WriteScratch", "the put's scratch buffers, stored inline"),
        ("Storage -> Query: LookUpScratch", "the index look-up scratch, stored inline"),
        ("Storage -> Relations: IncomingRelationCache", "the incoming-relation cache of a write, stored inline"),
        ("Storage -> FullText: PendingTextIndexes", "the text-index buffers of a write, stored inline"),
        ("Storage -> Sync: SyncWriteState", "the outbox state of a write (clock tick, counters, remote-apply mode), stored inline"),
        ("Storage -> Store: Store", "a transaction keeps its store (unowned) to reach the environment and the schema registry"),
        // Text indexes are bound with the rest of the schema.
        ("Schema -> FullText: TextIndexBinding", "an entity binding holds its text indexes' bindings, resolved with the others"),
        // The facade: handles keep the store they came from to open transactions.
        ("Schema -> Store: Store", "an entity binding keeps its store (unowned) for the records it reads"),
        ("Entity -> Store: Store", "the generated relation hooks (_cofferPutRelations, _cofferPutLinks) write through the store"),
        ("Box -> Store: Store", "a box is a handle into its store"),
        ("Query -> Store: Store", "a query runs in its store's transactions (through its box) and resolves links there"),
        ("Relations -> Store: Store", "relation handles load and resolve their targets in the store"),
        ("FullText -> Store: Store", "a text match over another entity resolves in the store"),
        ("Observation -> Store: Store", "observers subscribe to the store's commits"),
        ("Interchange -> Store: Store", "import is a Store method (Store+Import.swift)"),
        ("Selector -> Store: Store", "selector queries are Store methods (Store+SelectorQuery.swift) and resolve links there"),
        ("SQL -> Store: Store", "Smart SQL statements are Store methods (Store+SQL.swift) and read records through the store's catalog"),
    ]

    @Test func noLayerNamesATypeOfALayerAbove() throws {
        let clock = ContinuousClock()
        let start = clock.now
        let analysis = try LayerAnalysis(root: Self.sources)
        let rank = Dictionary(uniqueKeysWithValues: Self.layers.enumerated().map { ($1, $0) })
        let unplaced = analysis.folders.filter { rank[$0] == nil }.sorted()
        #expect(unplaced.isEmpty, "folders without a place in LayerDependencyTests.layers: \(unplaced)")

        var upward: [String: [String]] = [:]
        for reference in analysis.references {
            guard let from = rank[reference.from], let to = rank[reference.to], to > from else { continue }
            upward["\(reference.from) -> \(reference.to): \(reference.type)", default: []].append(reference.file)
        }
        let allowed = Set(Self.allowed.map(\.reference))
        let new = upward.keys.filter { !allowed.contains($0) }.sorted()
        #expect(
            new.isEmpty,
            """
            A layer names a type of a layer above it (order: \(Self.layers.joined(separator: " < "))):
            \(new.map { "\($0)   in \(upward[$0, default: []].sorted().joined(separator: ", "))" }.joined(separator: "\n"))
            Move the code to the layer above both (an extension in a `Type+Capability.swift`) or the
            type down to the layer that owns its concept; if the reference must stay, add it to
            LayerDependencyTests.allowed with its reason.
            """)
        let stale = allowed.subtracting(upward.keys).sorted()
        #expect(stale.isEmpty, "upward references listed in LayerDependencyTests.allowed that no longer exist (delete them): \(stale)")
        #expect(Self.allowed.count == allowed.count, "LayerDependencyTests.allowed lists a reference twice")
        let elapsed = clock.now - start
        #expect(elapsed < .seconds(5), "the analysis took \(elapsed)")
    }
}

/// Which folder's files name which top-level types of which other folders.
struct LayerAnalysis {
    struct Reference: Hashable {
        let from: String
        let to: String
        let type: String
        let file: String
    }

    private(set) var folders: Set<String> = []
    private(set) var references: Set<Reference> = []

    init(root: URL) throws {
        let manager = FileManager.default
        var scans: [(folder: String, file: String, scan: SourceScan)] = []
        for folder in try manager.contentsOfDirectory(atPath: root.path) {
            let directory = root.appendingPathComponent(folder)
            var isDirectory: ObjCBool = false
            guard manager.fileExists(atPath: directory.path, isDirectory: &isDirectory), isDirectory.boolValue else { continue }
            if folder.hasSuffix(".docc") { continue }  // the documentation catalog holds no code
            folders.insert(folder)
            for file in try manager.contentsOfDirectory(atPath: directory.path) where file.hasSuffix(".swift") {
                let bytes = [UInt8](try Data(contentsOf: directory.appendingPathComponent(file)))
                scans.append((folder, file, bytes.withUnsafeBufferPointer { SourceScan($0) }))
            }
        }
        var declaringFolders: [String: Set<String>] = [:]
        var nested: Set<String> = []
        for entry in scans {
            for name in entry.scan.topLevel { declaringFolders[name, default: []].insert(entry.folder) }
            nested.formUnion(entry.scan.nested)
        }
        var owner: [String: String] = [:]
        for (name, folders) in declaringFolders where folders.count == 1 && !nested.contains(name) {
            owner[name] = folders.first
        }
        for entry in scans {
            for name in entry.scan.names {
                guard let to = owner[name], to != entry.folder else { continue }
                references.insert(Reference(from: entry.folder, to: to, type: name, file: entry.file))
            }
        }
    }
}

/// One Swift file's type declarations (at the top level or nested) and the capitalised names
/// it uses, outside comments and string text (interpolations are code).
struct SourceScan {
    private(set) var topLevel: Set<String> = []
    private(set) var nested: Set<String> = []
    private(set) var names: Set<String> = []

    private let bytes: UnsafeBufferPointer<UInt8>
    private var index = 0
    private var depth = 0
    /// Set after a keyword that declares a type: whether the type it names is nested
    /// (`associatedtype` always is).
    private var declaringNested: Bool?

    init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
        code(endingAtParenthesis: false)
    }

    private static let declaringKeywords: Set<String> = ["class", "struct", "enum", "protocol", "actor", "typealias", "associatedtype"]

    private func byte(_ offset: Int) -> UInt8 {
        index + offset < bytes.count ? bytes[index + offset] : 0
    }

    private static func isIdentifierByte(_ c: UInt8) -> Bool {
        (c >= UInt8(ascii: "a") && c <= UInt8(ascii: "z")) || (c >= UInt8(ascii: "A") && c <= UInt8(ascii: "Z"))
            || (c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9")) || c == UInt8(ascii: "_")
    }

    /// Code up to the end, or up to the `)` that closes a string interpolation.
    private mutating func code(endingAtParenthesis: Bool) {
        var parentheses = 0
        while index < bytes.count {
            let c = bytes[index]
            switch c {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"):
                index += 1
                continue
            case UInt8(ascii: "/") where byte(1) == UInt8(ascii: "/"):
                while index < bytes.count && bytes[index] != UInt8(ascii: "\n") { index += 1 }
                continue
            case UInt8(ascii: "/") where byte(1) == UInt8(ascii: "*"):
                blockComment()
                continue
            case UInt8(ascii: "\""):
                string(hashes: 0)
            case UInt8(ascii: "#"):
                var hashes = 0
                while byte(hashes) == UInt8(ascii: "#") { hashes += 1 }
                if byte(hashes) == UInt8(ascii: "\"") {
                    index += hashes
                    string(hashes: hashes)
                } else {
                    index += 1
                }
            case UInt8(ascii: "{"):
                depth += 1
                index += 1
            case UInt8(ascii: "}"):
                depth -= 1
                index += 1
            case UInt8(ascii: "("):
                parentheses += 1
                index += 1
            case UInt8(ascii: ")"):
                index += 1
                if parentheses == 0 && endingAtParenthesis { return }
                parentheses -= 1
            case _ where Self.isIdentifierByte(c):
                identifier()
                continue
            default:
                index += 1
            }
            declaringNested = nil
        }
    }

    private mutating func identifier() {
        let start = index
        while index < bytes.count && Self.isIdentifierByte(bytes[index]) { index += 1 }
        let first = bytes[start]
        if first >= UInt8(ascii: "0") && first <= UInt8(ascii: "9") {
            declaringNested = nil
            return
        }
        let word = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        if let declaredNested = declaringNested {
            declaringNested = nil
            if first == UInt8(ascii: "_") || (first >= UInt8(ascii: "A") && first <= UInt8(ascii: "Z")) {
                if declaredNested || depth > 0 { nested.insert(word) } else { topLevel.insert(word) }
                return
            }
        }
        if Self.declaringKeywords.contains(word) {
            declaringNested = word == "associatedtype"
        } else if first >= UInt8(ascii: "A") && first <= UInt8(ascii: "Z") {
            names.insert(word)
        }
    }

    private mutating func blockComment() {
        var level = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "/") && byte(1) == UInt8(ascii: "*") {
                level += 1
                index += 2
            } else if bytes[index] == UInt8(ascii: "*") && byte(1) == UInt8(ascii: "/") {
                level -= 1
                index += 2
                if level == 0 { return }
            } else {
                index += 1
            }
        }
    }

    /// A string literal from its opening quote (after any `#`s): its text is skipped, its
    /// interpolations are read as code.
    private mutating func string(hashes: Int) {
        let multiline = byte(1) == UInt8(ascii: "\"") && byte(2) == UInt8(ascii: "\"")
        index += multiline ? 3 : 1
        let quotes = multiline ? 3 : 1
        while index < bytes.count {
            let c = bytes[index]
            if c == UInt8(ascii: "\\") {
                var marks = 0
                while marks < hashes && byte(1 + marks) == UInt8(ascii: "#") { marks += 1 }
                if marks == hashes {
                    if byte(1 + hashes) == UInt8(ascii: "(") {
                        index += 2 + hashes
                        code(endingAtParenthesis: true)
                        continue
                    }
                    index += 2 + hashes
                    continue
                }
                index += 1
            } else if c == UInt8(ascii: "\"") {
                var closing = 0
                while closing < quotes && byte(closing) == UInt8(ascii: "\"") { closing += 1 }
                var marks = 0
                while closing == quotes && marks < hashes && byte(quotes + marks) == UInt8(ascii: "#") { marks += 1 }
                if closing == quotes && marks == hashes {
                    index += quotes + hashes
                    return
                }
                index += 1
            } else if c == UInt8(ascii: "\n") && !multiline {
                return
            } else {
                index += 1
            }
        }
    }
}
