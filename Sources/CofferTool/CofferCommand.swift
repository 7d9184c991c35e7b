import ArgumentParser
import Coffer
import Foundation

/// `coffer`: inspect and verify any Coffer store from its schema catalog, without the app's
/// code. It opens stores read-only and never changes them.
@main
struct CofferCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "coffer",
        abstract: "Inspect Coffer stores (read-only), and copy them compacted.",
        subcommands: [Info.self, Dump.self, Query.self, Export.self, Check.self, Stat.self, Compact.self]
    )
}

struct Info: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Entities with object counts, properties with types and indexes, file size and map usage.")

    @Argument(help: "The store directory.")
    var directory: String

    func run() throws {
        let store = try openStoreOrFail(directory)
        let info = try failing { try store.info() }
        print("Store \(info.path)")
        print("  file \(formatBytes(info.fileSize)), map \(formatBytes(info.mapSize)), \(formatBytes(info.usedBytes)) used (\(info.mapSize > 0 ? info.usedBytes * 100 / info.mapSize : 0)%)")
        if info.entities.isEmpty { print("  no entities") }
        for entity in info.entities {
            print("\n\(entity.name) (entity id \(entity.id)): \(entity.count) object\(entity.count == 1 ? "" : "s")")
            print("  id: Id")
            for property in entity.properties {
                var notes: [String] = []
                if property.isUnique { notes.append("unique") } else if property.isIndexed { notes.append("indexed") }
                if let tokenizer = property.fullText { notes.append("full-text (\(tokenizer.rawValue)), \(property.fullTextEntries) index entries") }
                let suffix = notes.isEmpty ? "" : "  [\(notes.joined(separator: ", "))]"
                print("  \(property.name): \(property.swiftType) (\(property.type.rawValue), property id \(property.id))\(suffix)")
            }
        }
        try store.close()
    }
}

struct Dump: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Print objects of one entity, one JSON object per line.")

    @Argument(help: "The store directory.")
    var directory: String

    @Argument(help: "The entity name, as `coffer info` shows it.")
    var entity: String

    @Option(help: "Print at most this many objects.")
    var limit: Int?

    func validate() throws {
        if let limit, limit < 0 { throw ValidationError("--limit must not be negative") }
    }

    func run() throws {
        let store = try openStoreOrFail(directory)
        try failing { try store.dump(entity: entity, limit: limit) { print($0) } }
        try store.close()
    }
}

struct Check: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Verify a store: the data file's structure (without LMDB), then records, indexes and relations.",
        discussion: """
            Exit status 0: intact. 1: damaged (each problem is printed) or unreadable.
            The structural check reads the file with bounds checks before LMDB maps it, so a
            damaged file is reported, never crashes the tool. Run it while no process writes,
            or expect a retry message.
            """)

    @Argument(help: "The store directory.")
    var directory: String

    func run() throws {
        let structure = try failing { try Store.verify(directory: directory) }
        guard structure.isIntact else {
            print(structure)
            throw ExitCode.failure
        }
        let store = try openStoreOrFail(directory)
        let report = try failing { try store.verify() }
        try store.close()
        print(report)
        if !report.isIntact { throw ExitCode.failure }
    }
}

struct Query: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Objects matching a Cloudant Query selector, one JSON object per line (or the plan with --explain).")

    @Argument(help: "The store directory.")
    var directory: String

    @Argument(help: "The entity's stored name.")
    var entity: String

    @Argument(help: #"The selector, e.g. '{"age": {"$gt": 12}}'."#)
    var selector: String

    @Option(help: "Sort fields, e.g. name:asc,age:desc.")
    var sort: String?

    @Option(help: "Skip this many matches.")
    var skip = 0

    @Option(help: "Return at most this many matches.")
    var limit: Int?

    @Option(help: "Only these fields, e.g. name,age (id or _id keeps the id).")
    var fields: String?

    @Flag(help: "Print how the query runs instead of running it.")
    var explain = false

    func run() throws {
        var order: [(String, SortDirection)] = []
        for part in (sort ?? "").split(separator: ",") {
            let pieces = part.split(separator: ":", maxSplits: 1).map(String.init)
            switch pieces.count == 2 ? pieces[1].lowercased() : "asc" {
            case "asc", "ascending": order.append((pieces[0], .ascending))
            case "desc", "descending": order.append((pieces[0], .descending))
            default: throw ValidationError("--sort takes name:asc or name:desc, not \(part)")
            }
        }
        let store = try openStoreOrFail(directory)
        defer { try? store.close() }
        if explain {
            print(try failing { try store.explain(entity: entity, selector: selector, sort: order) })
            return
        }
        let wanted = fields.map { $0.split(separator: ",").map(String.init) }
        try failing {
            try store.query(entity: entity, selector: selector, sort: order, skip: skip, limit: limit, fields: wanted) { print($0) }
        }
    }
}

struct Export: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Every object of an entity (or those matching --selector) as JSON lines, in id order.")

    @Argument(help: "The store directory.")
    var directory: String

    @Argument(help: "The entity's stored name.")
    var entity: String

    @Option(help: "Only the objects matching this Cloudant Query selector.")
    var selector = "{}"

    @Flag(help: "No progress on standard error.")
    var quiet = false

    func run() throws {
        let store = try openStoreOrFail(directory)
        defer { try? store.close() }
        var progress = Progress(verb: "exported", noun: "\(entity) object", quiet: quiet)
        try failing {
            try store.query(entity: entity, selector: selector) { line in
                print(line)
                progress.advance()
            }
        }
        progress.finish()
    }
}

struct Stat: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "LMDB statistics: pages and depth per database, free pages, reader slots.")

    @Argument(help: "The store directory.")
    var directory: String

    func run() throws {
        let store = try openStoreOrFail(directory)
        let statistics = try failing { try store.statistics() }
        try store.close()
        let page = statistics.pageSize
        print("Store \(directory)")
        print("  page size \(page) B, map \(formatBytes(statistics.mapSize)), \(statistics.pagesUsed) pages used (\(formatBytes(statistics.pagesUsed * page)))")
        print("  free pages \(statistics.freePages) (\(formatBytes(statistics.freePages * page)); `coffer compact` leaves them out)")
        print("  reader slots \(statistics.readersUsed) used of \(statistics.maximumReaders)")
        let width = max(8, statistics.databases.map(\.name.count).max() ?? 0)
        print("\n  " + "database".padding(toLength: width, withPad: " ", startingAt: 0) + "    entries  depth  branch    leaf  overflow")
        for database in statistics.databases {
            let columns = [(database.entries, 11), (database.depth, 7), (database.branchPages, 8), (database.leafPages, 8), (database.overflowPages, 10)]
            print("  " + database.name.padding(toLength: width, withPad: " ", startingAt: 0)
                  + columns.map { value, size in String(repeating: " ", count: max(0, size - String(value).count)) + String(value) }.joined())
        }
    }
}

struct Compact: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write a compacted copy of a store (free pages left out) into a new directory.")

    @Argument(help: "The store directory.")
    var directory: String

    @Argument(help: "The directory for the copy (created; must not hold a store).")
    var output: String

    func run() throws {
        let store = try openStoreOrFail(directory)
        try failing { try store.copy(to: output) }
        try store.close()
        let before = (try? FileManager.default.attributesOfItem(atPath: directory + "/data.mdb")[.size] as? Int) ?? 0
        let after = (try? FileManager.default.attributesOfItem(atPath: output + "/data.mdb")[.size] as? Int) ?? 0
        print("Copied \(directory) (\(formatBytes(before))) to \(output) (\(formatBytes(after)))")
    }
}

/// A count of work done on standard error: one line rewritten in place on a terminal, a
/// plain line every 10,000 otherwise (a log keeps them), nothing with `--quiet`.
struct Progress {
    let verb: String
    let noun: String
    let quiet: Bool
    private(set) var count = 0
    private let isTerminal = isatty(STDERR_FILENO) != 0

    init(verb: String, noun: String, quiet: Bool) {
        self.verb = verb
        self.noun = noun
        self.quiet = quiet
    }

    mutating func advance() {
        count += 1
        guard !quiet else { return }
        if isTerminal, count % 1_000 == 0 {
            write("\rcoffer: \(verb) \(count) \(noun)s...")
        } else if !isTerminal, count % 10_000 == 0 {
            write("coffer: \(verb) \(count) \(noun)s...\n")
        }
    }

    func finish() {
        guard !quiet else { return }
        write((isTerminal ? "\r" : "") + "coffer: \(verb) \(count) \(noun)\(count == 1 ? "" : "s")\n")
    }

    private func write(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }
}

/// Opens a store or exits with status 1 and a message on standard error.
func openStoreOrFail(_ directory: String) throws -> Store {
    // Verified first: the tool reads stores of doubtful state, and LMDB trusts its pages.
    try failing { try Store(directory: directory, options: StoreOptions(readOnly: true, verifyOnOpen: true)) }
}

/// Runs `body`, turning a thrown error into a message on standard error and exit status 1.
func failing<T>(_ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch {
        FileHandle.standardError.write(Data("coffer: \(error)\n".utf8))
        throw ExitCode.failure
    }
}

func formatBytes(_ bytes: Int) -> String {
    ByteCountFormatter.string(fromByteCount: Int64(bytes), countStyle: .binary)
}
