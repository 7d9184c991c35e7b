import ArgumentParser
import Coffer
import Foundation

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

    @Option(help: "Return at most this many matches (0: no limit, as in Cloudant).")
    var limit: Int?

    @Option(help: "Only these fields, e.g. name,age (id or _id keeps the id; empty: every field).")
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
