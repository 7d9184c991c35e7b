import CLMDB
import Foundation

extension Store {
    /// Pages, depth and entries of every named database, the free list and the reader
    /// slots, from one read snapshot. Works on a store another process is writing to.
    ///
    /// ```swift
    /// let statistics = try Store(directory: path, options: StoreOptions(readOnly: true)).statistics()
    /// print(statistics.freePages * statistics.pageSize, "bytes free")
    /// ```
    public func statistics() throws -> StoreStatistics {
        try openTables()   // tables created since the store opened, by any process
        return try performRead { transaction in
            var info = MDB_envinfo()
            var mainStat = MDB_stat()
            try transaction.check(mdb_env_info(environment.env, &info), "reading the environment of \(path)")
            try transaction.check(mdb_env_stat(environment.env, &mainStat), "reading the environment of \(path)")
            // The main database's keys are the names of the named databases.
            var names: [String] = []
            try transaction.withCursor(1, "listing the databases of \(path)") { cursor in
                var current = try cursor.first()
                while let entry = current {
                    names.append(String(decoding: entry.key, as: UTF8.self))
                    current = try cursor.next()
                }
            }
            var known = registry.openedDatabases
            if let catalog = catalogDatabase { known[Catalog.databaseName] = catalog }
            let databases = try names.compactMap { name -> DatabaseStatistics? in
                guard let database = known[name] else { return nil }   // not opened by this build
                var stat = MDB_stat()
                try transaction.check(mdb_stat(transaction.txn, database, &stat), "reading the statistics of \(name)")
                return DatabaseStatistics(name: name, entries: stat.ms_entries, depth: Int(stat.ms_depth),
                                          branchPages: stat.ms_branch_pages, leafPages: stat.ms_leaf_pages,
                                          overflowPages: stat.ms_overflow_pages)
            }
            // The free list (database 0): each value is a page-number list, its count first.
            var freePages = 0
            try transaction.withCursor(0, "reading the free list of \(path)") { cursor in
                var current = try cursor.first()
                while let entry = current {
                    guard entry.value.count >= MemoryLayout<Int>.size else {
                        throw CofferError.damagedStore(part: .file(path: path), reason: "a free-list entry is damaged")
                    }
                    let count = entry.value.loadUnaligned(as: Int.self)
                    guard count >= 0, count <= entry.value.count / MemoryLayout<Int>.size else {
                        throw CofferError.damagedStore(part: .file(path: path), reason: "a free-list entry is damaged")
                    }
                    freePages += count
                    current = try cursor.next()
                }
            }
            return StoreStatistics(pageSize: Int(mainStat.ms_psize), mapSize: info.me_mapsize,
                                   pagesUsed: info.me_last_pgno + 1, freePages: freePages,
                                   readersUsed: Int(info.me_numreaders), maximumReaders: Int(info.me_maxreaders),
                                   databases: databases)
        }
    }
}
