import ArgumentParser
import Coffer
import Foundation

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
