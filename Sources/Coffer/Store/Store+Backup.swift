import CLMDB
import Foundation

extension Store {
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
