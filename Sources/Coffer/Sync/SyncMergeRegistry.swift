import Foundation

/// The merges apps registered, by stored entity name, each type-erased to work on records.
final class SyncMergeRegistry: @unchecked Sendable {
    /// The targets of the colliding to-many relations by schema position, as the local
    /// changes have them and as the pulled change has them.
    typealias RelationViews = (local: [Int: [Id]], remote: [Int: [Id]])

    /// Decodes the local and remote records of the object `id` (its colliding to-many
    /// relations from `relations`), calls the app's merge and puts its result in the
    /// transaction.
    typealias Merge = @Sendable (_ transaction: Transaction, _ id: Id, _ local: UnsafeRawBufferPointer,
                                 _ remote: UnsafeRawBufferPointer, _ properties: [String], _ relations: RelationViews) throws -> Void

    private let lock = NSLock()
    private var merges: [String: Merge] = [:]

    func merge(for entity: String) -> Merge? {
        lock.withLock { merges[entity] }
    }

    func set(_ merge: Merge?, for entity: String) {
        lock.withLock { merges[entity] = merge }
    }
}
