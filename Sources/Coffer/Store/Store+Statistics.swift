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

    /// Writes a compacted copy of the store into the directory `destination` (created when
    /// missing; it must not hold a store): free pages are left out and pages renumbered, so
    /// the copy is as small as the data. The copy is one consistent snapshot, taken while
    /// the store stays in use (writers go on meanwhile), and a complete store: open it with
    /// `Store(directory:)`. A copy that fails leaves no partial file behind, or its error
    /// names the partial file it could not remove.
    ///
    /// ```swift
    /// try store.backup(to: "/backups/coffer-2026-11-22")
    /// let copy = try Store(directory: "/backups/coffer-2026-11-22")
    /// ```
    ///
    /// Inside `store.read { }` the copy holds the latest committed state, which may be newer
    /// than the closure's snapshot.
    ///
    /// - Throws: ``CofferError/misuse(_:)`` when `destination` already holds a data file
    ///   (`.destinationHoldsStore`), or inside `store.write { }` (`.backupInsideWrite`: the
    ///   copy could not hold the write's own changes); ``CofferError/storage(code:message:)``
    ///   when LMDB cannot write it.
    public func backup(to destination: String) throws {
        if Transaction.current(for: self)?.isWrite == true {
            throw CofferError.misuse(.backupInsideWrite(path: path))
        }
        try FileManager.default.createDirectory(atPath: destination, withIntermediateDirectories: true)
        guard !FileManager.default.fileExists(atPath: destination + "/data.mdb") else {
            throw CofferError.misuse(.destinationHoldsStore(path: destination))
        }
        // Inside a read of this thread the gate is held already; taking it again would wait
        // behind a waiting map growth or close, which waits for this read: a deadlock.
        let holdsGate = Transaction.current(for: self) != nil
        while true {
            if !holdsGate { environment.gate.lockShared() }
            let closed = environment.isClosed
            let rc = closed ? 0 : mdb_env_copy2(environment.env, destination, UInt32(MDB_CP_COMPACT))
            if !holdsGate { environment.gate.unlock() }
            if closed { throw CofferError.storeClosed(path: path) }
            if rc == 0 { return }
            // LMDB leaves the file it created (exclusively) behind: a failed copy leaves none,
            // or says where it is.
            let partial = destination + "/data.mdb"
            if FileManager.default.fileExists(atPath: partial) {
                do {
                    try FileManager.default.removeItem(atPath: partial)
                } catch {
                    throw CofferError.storage(code: .init(result: rc), message: "cannot copy \(path) to \(destination): \(LMDB.message(rc)); the partial copy \(partial) could not be removed: \(error.localizedDescription)")
                }
            }
            if rc == MDB_MAP_RESIZED && !holdsGate {
                // Another process grew the map: adopt its size and copy again.
                try adoptMapSizeOfOtherProcess()
                continue
            }
            let hint = rc == MDB_MAP_RESIZED ? " (another process grew the map; copy outside store.read { })" : ""
            throw CofferError.storage(code: .init(result: rc), message: "cannot copy \(path) to \(destination): \(LMDB.message(rc))\(hint)")
        }
    }
}
