import Foundation
import GRDB

/// A Codable record with the indexed column, as GRDB's documentation recommends.
struct GRDBObject: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "object"
    var id: Int64
    var name: String
    var i32: Int32
    var i64: Int64
    var d: Double
    var f: Float
    var b: Bool
    var blob: Data

    enum Columns {
        static let name = Column(CodingKeys.name)
        static let i32 = Column(CodingKeys.i32)
    }
}

/// GRDB on SQLite: what a Swift developer on Linux picks today.
func runGRDB(_ workload: Workload, directory: String) throws -> ContenderResult {
    var result = ContenderResult()
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    let dbQueue = try DatabaseQueue(path: directory + "/db.sqlite")
    try dbQueue.write { db in
        try db.create(table: GRDBObject.databaseTableName) { table in
            table.primaryKey("id", .integer)
            table.column("name", .text).notNull().indexed()
            table.column("i32", .integer).notNull()
            table.column("i64", .integer).notNull()
            table.column("d", .double).notNull()
            table.column("f", .double).notNull()
            table.column("b", .boolean).notNull()
            table.column("blob", .blob).notNull()
        }
    }
    let n = workload.count
    let objects = (1...UInt64(n)).map { i in
        GRDBObject(id: Int64(i), name: Workload.name(i), i32: Workload.i32(i), i64: Workload.i64(i),
                   d: Workload.double(i), f: Workload.float(i), b: Workload.bool(i), blob: Workload.blob(i))
    }
    try measure(.insert, objects: n, into: &result) {
        try dbQueue.write { db in
            for object in objects { try object.insert(db) }
        }
        return n
    }
    // The arrays are freed after the clock stops, as the materialisation floor's is.
    var kept: [GRDBObject] = []
    try measure(.readAll, objects: n, into: &result) {
        kept = try dbQueue.read { db in try GRDBObject.fetchAll(db) }
        return kept.count
    }
    kept = []
    try measure(.getRandom, objects: n, into: &result) {
        try dbQueue.read { db in
            var found = 0
            for id in workload.randomIds where try GRDBObject.fetchOne(db, key: Int64(id)) != nil { found += 1 }
            return found
        }
    }
    try measure(.indexEquality, objects: workload.lookupIds.count, into: &result) {
        try dbQueue.read { db in
            var found = 0
            for id in workload.lookupIds where try GRDBObject.filter(GRDBObject.Columns.name == Workload.name(id)).fetchOne(db) != nil {
                found += 1
            }
            return found
        }
    }
    try measure(.scanQuery, objects: n / 10, into: &result) {
        kept = try dbQueue.read { db in try GRDBObject.filter(GRDBObject.Columns.i32 < workload.scanThreshold).fetchAll(db) }
        return kept.count
    }
    kept = []
    try measure(.update, objects: n, into: &result) {
        try dbQueue.write { db in
            var all = try GRDBObject.fetchAll(db)
            for index in all.indices {
                all[index].i64 += 1
                all[index].d += 1
                try all[index].update(db)
            }
            return all.count
        }
    }
    result.fileBytes = directoryBytes(directory)
    try measure(.remove, objects: n, into: &result) {
        try dbQueue.write { db in
            var removed = 0
            for id in 1...Int64(n) where try GRDBObject.deleteOne(db, key: id) { removed += 1 }
            return removed
        }
    }
    result.peakResidentKiB = peakResidentKiB(result)
    return result
}

/// SQLite FTS5 through GRDB on the full-text workload (`porter unicode61`, like Coffer's
/// `.porter`).
func runGRDBText(_ workload: TextWorkload, directory: String) throws -> TextResult {
    var result = TextResult()
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    let dbQueue = try DatabaseQueue(path: directory + "/text.sqlite")
    try dbQueue.write { db in
        try db.execute(sql: "CREATE VIRTUAL TABLE document USING fts5(body, tokenize = 'porter unicode61')")
    }
    let start = DispatchTime.now().uptimeNanoseconds
    try dbQueue.write { db in
        let statement = try db.makeStatement(sql: "INSERT INTO document(rowid, body) VALUES (?, ?)")
        for (offset, body) in workload.documents.enumerated() {
            try statement.execute(arguments: [offset + 1, body])
        }
    }
    result.indexing = Double(workload.count) / (Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
    for (name, search) in workload.searches {
        let (rate, found) = try timeSearch(workload.repetitions) {
            try dbQueue.read { db in
                try Int64.fetchAll(db, sql: "SELECT rowid FROM document WHERE document MATCH ? ORDER BY rowid", arguments: [search]).count
            }
        }
        result.searchesPerSecond[name] = rate
        result.matches[name] = found
    }
    return result
}
