import CLMDB
import Foundation

extension CofferError {
    /// What the storage layer reported: an LMDB result code or a system `errno`, never one
    /// number that could mean either.
    ///
    /// ```swift
    /// do {
    ///     try store.write { try people.put(&person) }
    /// } catch CofferError.storage(.lmdb(.mapFull), _) {
    ///     print("the store reached its maxSize")
    /// } catch CofferError.storage(.system(let code), let message) {
    ///     print("errno \(code.rawValue) (\(code.text)): \(message)")
    /// }
    /// ```
    public enum StorageCode: Sendable, Hashable, CustomStringConvertible {
        /// A result code of LMDB itself (MDB_MAP_FULL, MDB_READERS_FULL, ...).
        ///
        /// ```swift
        /// catch CofferError.storage(.lmdb(.readersFull), _) { closeIdleReaders() }
        /// ```
        case lmdb(LMDBCode)

        /// An operating-system error (`errno`), from the file system or from LMDB passing
        /// one on (a missing directory, a full disk, no permission).
        ///
        /// ```swift
        /// catch CofferError.storage(.system(.noSpace), _) { freeDiskSpace() }
        /// ```
        case system(SystemCode)

        /// Classifies the result of an LMDB call: LMDB's own codes are negative and in its
        /// range; every other non-zero result is an `errno` LMDB passes on.
        init(result code: Int32) {
            if code >= MDB_KEYEXIST && code <= MDB_LAST_ERRCODE {
                self = .lmdb(LMDBCode(rawValue: code))
            } else {
                self = .system(SystemCode(rawValue: code))
            }
        }

        /// The number as LMDB or the system gave it.
        ///
        /// ```swift
        /// catch CofferError.storage(let code, _) { log(code.rawValue) }
        /// ```
        public var rawValue: Int32 {
            switch self {
            case .lmdb(let code): return code.rawValue
            case .system(let code): return code.rawValue
            }
        }

        /// `LMDB MDB_MAP_FULL (-30792)` or `errno 2 (No such file or directory)`.
        ///
        /// ```swift
        /// print(CofferError.StorageCode.lmdb(.mapFull))   // LMDB MDB_MAP_FULL (-30792)
        /// ```
        public var description: String {
            switch self {
            case .lmdb(let code): return code.description
            case .system(let code): return code.description
            }
        }
    }

    /// An LMDB result code, with names for the codes LMDB defines.
    ///
    /// ```swift
    /// catch CofferError.storage(.lmdb(let code), _) where code == .readersFull || code == .mapFull { ... }
    /// ```
    public struct LMDBCode: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        /// The code as LMDB returns it (negative, MDB_KEYEXIST through MDB_LAST_ERRCODE).
        ///
        /// ```swift
        /// CofferError.LMDBCode.mapFull.rawValue   // -30792
        /// ```
        public let rawValue: Int32

        /// A code as LMDB returns it.
        ///
        /// ```swift
        /// let code = CofferError.LMDBCode(rawValue: -30792)   // .mapFull
        /// ```
        public init(rawValue: Int32) { self.rawValue = rawValue }

        /// MDB_KEYEXIST: the key/data pair already exists.
        ///
        /// ```swift
        /// code == .keyExists
        /// ```
        public static let keyExists = LMDBCode(rawValue: MDB_KEYEXIST)
        /// MDB_NOTFOUND: no matching key/data pair.
        ///
        /// ```swift
        /// code == .notFound
        /// ```
        public static let notFound = LMDBCode(rawValue: MDB_NOTFOUND)
        /// MDB_PAGE_NOTFOUND: a requested page was not found (damage).
        ///
        /// ```swift
        /// code == .pageNotFound
        /// ```
        public static let pageNotFound = LMDBCode(rawValue: MDB_PAGE_NOTFOUND)
        /// MDB_CORRUPTED: LMDB found a page of the wrong type (damage).
        ///
        /// ```swift
        /// code == .corrupted
        /// ```
        public static let corrupted = LMDBCode(rawValue: MDB_CORRUPTED)
        /// MDB_PANIC: an earlier fatal error left the environment unusable; reopen the store.
        ///
        /// ```swift
        /// code == .panic
        /// ```
        public static let panic = LMDBCode(rawValue: MDB_PANIC)
        /// MDB_VERSION_MISMATCH: the file was written by another LMDB version.
        ///
        /// ```swift
        /// code == .versionMismatch
        /// ```
        public static let versionMismatch = LMDBCode(rawValue: MDB_VERSION_MISMATCH)
        /// MDB_INVALID: the file is not an LMDB file.
        ///
        /// ```swift
        /// code == .invalid
        /// ```
        public static let invalid = LMDBCode(rawValue: MDB_INVALID)
        /// MDB_MAP_FULL: the store reached its size limit (`StoreOptions.maxSize`).
        ///
        /// ```swift
        /// code == .mapFull
        /// ```
        public static let mapFull = LMDBCode(rawValue: MDB_MAP_FULL)
        /// MDB_DBS_FULL: more named databases than `StoreOptions.maxNamedDatabases`.
        ///
        /// ```swift
        /// code == .databasesFull
        /// ```
        public static let databasesFull = LMDBCode(rawValue: MDB_DBS_FULL)
        /// MDB_READERS_FULL: every reader slot is taken (too many reading threads or processes).
        ///
        /// ```swift
        /// code == .readersFull
        /// ```
        public static let readersFull = LMDBCode(rawValue: MDB_READERS_FULL)
        /// MDB_TXN_FULL: the write transaction holds too many dirty pages.
        ///
        /// ```swift
        /// code == .transactionFull
        /// ```
        public static let transactionFull = LMDBCode(rawValue: MDB_TXN_FULL)
        /// MDB_CURSOR_FULL: cursor stack too deep (damage).
        ///
        /// ```swift
        /// code == .cursorFull
        /// ```
        public static let cursorFull = LMDBCode(rawValue: MDB_CURSOR_FULL)
        /// MDB_PAGE_FULL: a page has no more room.
        ///
        /// ```swift
        /// code == .pageFull
        /// ```
        public static let pageFull = LMDBCode(rawValue: MDB_PAGE_FULL)
        /// MDB_MAP_RESIZED: another process grew the map beyond this one's.
        ///
        /// ```swift
        /// code == .mapResized
        /// ```
        public static let mapResized = LMDBCode(rawValue: MDB_MAP_RESIZED)
        /// MDB_INCOMPATIBLE: a database was opened with flags it was not created with.
        ///
        /// ```swift
        /// code == .incompatible
        /// ```
        public static let incompatible = LMDBCode(rawValue: MDB_INCOMPATIBLE)
        /// MDB_BAD_RSLOT: a reader slot was used wrongly.
        ///
        /// ```swift
        /// code == .badReaderSlot
        /// ```
        public static let badReaderSlot = LMDBCode(rawValue: MDB_BAD_RSLOT)
        /// MDB_BAD_TXN: the transaction must abort (an earlier error in it).
        ///
        /// ```swift
        /// code == .badTransaction
        /// ```
        public static let badTransaction = LMDBCode(rawValue: MDB_BAD_TXN)
        /// MDB_BAD_VALSIZE: a key or value of an unsupported size.
        ///
        /// ```swift
        /// code == .badValueSize
        /// ```
        public static let badValueSize = LMDBCode(rawValue: MDB_BAD_VALSIZE)
        /// MDB_BAD_DBI: a database handle that changed or was closed.
        ///
        /// ```swift
        /// code == .badDatabase
        /// ```
        public static let badDatabase = LMDBCode(rawValue: MDB_BAD_DBI)

        /// `LMDB MDB_MAP_FULL (-30792)`.
        ///
        /// ```swift
        /// print(CofferError.LMDBCode.readersFull)   // LMDB MDB_READERS_FULL (-30790)
        /// ```
        public var description: String {
            let text = mdb_strerror(rawValue).map { String(cString: $0) } ?? "error"
            // LMDB's text starts with the constant's name: "MDB_MAP_FULL: Environment mapsize limit reached".
            let name = text.split(separator: ":", maxSplits: 1).first.map(String.init) ?? text
            return "LMDB \(name.hasPrefix("MDB_") ? name : "error") (\(rawValue))"
        }
    }

    /// A system error number (`errno`), with names for the ones a store meets.
    ///
    /// ```swift
    /// catch CofferError.storage(.system(let code), _) where code == .accessDenied { askForPermission() }
    /// ```
    public struct SystemCode: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        /// The `errno` value.
        ///
        /// ```swift
        /// CofferError.SystemCode.notADirectory.rawValue   // ENOTDIR
        /// ```
        public let rawValue: Int32

        /// A code from an `errno` value.
        ///
        /// ```swift
        /// let code = CofferError.SystemCode(rawValue: errno)
        /// ```
        public init(rawValue: Int32) { self.rawValue = rawValue }

        /// ENOENT: no such file or directory.
        ///
        /// ```swift
        /// code == .noSuchFile
        /// ```
        public static let noSuchFile = SystemCode(rawValue: ENOENT)
        /// ENOTDIR: a path component is not a directory.
        ///
        /// ```swift
        /// code == .notADirectory
        /// ```
        public static let notADirectory = SystemCode(rawValue: ENOTDIR)
        /// EEXIST: the file exists.
        ///
        /// ```swift
        /// code == .exists
        /// ```
        public static let exists = SystemCode(rawValue: EEXIST)
        /// EACCES: permission denied.
        ///
        /// ```swift
        /// code == .accessDenied
        /// ```
        public static let accessDenied = SystemCode(rawValue: EACCES)
        /// EROFS: the file system is read-only.
        ///
        /// ```swift
        /// code == .readOnlyFileSystem
        /// ```
        public static let readOnlyFileSystem = SystemCode(rawValue: EROFS)
        /// ENOSPC: no space left on the device.
        ///
        /// ```swift
        /// code == .noSpace
        /// ```
        public static let noSpace = SystemCode(rawValue: ENOSPC)
        /// ENOMEM: not enough memory (or address space for the map).
        ///
        /// ```swift
        /// code == .outOfMemory
        /// ```
        public static let outOfMemory = SystemCode(rawValue: ENOMEM)
        /// EIO: an input/output error of the device.
        ///
        /// ```swift
        /// code == .ioError
        /// ```
        public static let ioError = SystemCode(rawValue: EIO)
        /// EAGAIN: the resource is temporarily unavailable (a lock held elsewhere).
        ///
        /// ```swift
        /// code == .tryAgain
        /// ```
        public static let tryAgain = SystemCode(rawValue: EAGAIN)
        /// EBUSY: the resource is busy; retry later.
        ///
        /// ```swift
        /// code == .busy
        /// ```
        public static let busy = SystemCode(rawValue: EBUSY)
        /// EINVAL: an invalid argument.
        ///
        /// ```swift
        /// code == .invalidArgument
        /// ```
        public static let invalidArgument = SystemCode(rawValue: EINVAL)

        /// The system's text for the code (`strerror`).
        ///
        /// ```swift
        /// CofferError.SystemCode.noSuchFile.text   // "No such file or directory"
        /// ```
        public var text: String { String(cString: strerror(rawValue)) }

        /// `errno 2 (No such file or directory)`.
        ///
        /// ```swift
        /// print(CofferError.SystemCode.noSpace)
        /// ```
        public var description: String { "errno \(rawValue) (\(text))" }
    }
}

extension CofferError.SystemCode {
    /// The `errno` a Foundation file operation failed with, when its error carries one
    /// (directly, or as the underlying POSIX error of a Cocoa error).
    init?(of error: any Error) {
        let error = error as NSError
        if error.domain == NSPOSIXErrorDomain {
            self.init(rawValue: Int32(error.code))
        } else if let underlying = error.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain {
            self.init(rawValue: Int32(underlying.code))
        } else {
            return nil
        }
    }
}
