import Foundation

/// The merges apps registered, by stored entity name, each type-erased to work on records.
final class SyncMergeRegistry: @unchecked Sendable {
    /// Decodes the local and remote records of the object `id`, calls the app's merge and
    /// puts its result in the transaction.
    typealias Merge = @Sendable (_ transaction: Transaction, _ id: Id, _ local: UnsafeRawBufferPointer,
                                 _ remote: UnsafeRawBufferPointer, _ properties: [String]) throws -> Void

    private let lock = NSLock()
    private var merges: [String: Merge] = [:]

    func merge(for entity: String) -> Merge? {
        lock.withLock { merges[entity] }
    }

    func set(_ merge: Merge?, for entity: String) {
        lock.withLock { merges[entity] = merge }
    }
}
