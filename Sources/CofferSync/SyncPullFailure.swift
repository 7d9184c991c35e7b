import Foundation

/// An entity whose pull failed, as ``SyncStatus/pullFailures`` lists it.
///
/// ```swift
/// if let failure = status.pullFailures.first { print("\(failure.entity): \(failure.error), \(failure.attempts) attempts") }
/// ```
public struct SyncPullFailure: Sendable {
    /// The entity's stored name.
    ///
    /// ```swift
    /// failure.entity   // "Task"
    /// ```
    public let entity: String
    /// Why the last attempt failed: usually a ``SyncTransportError`` or a `CofferError` such as
    /// `.invalidSyncPage` naming the entity, field and object.
    ///
    /// ```swift
    /// if case CofferError.invalidSyncPage(_, let field, _)? = failure.error as? CofferError { print(field ?? "-") }
    /// ```
    public let error: any Error
    /// Failed attempts in a row.
    ///
    /// ```swift
    /// failure.attempts   // 3
    /// ```
    public let attempts: Int
    /// When the first of them failed.
    ///
    /// ```swift
    /// Date().timeIntervalSince(failure.since)   // 42.5
    /// ```
    public let since: Date
    /// When ``SyncReplica/run()`` tries the entity again: each failure in a row doubles the
    /// wait (with jitter) from ``SyncReplica/Options/entityRetry``'s first up to its longest, and
    /// the passes before then leave the entity out while the others sync. A success resets
    /// it; ``SyncReplica/syncNow()`` tries every entity whatever this says.
    ///
    /// ```swift
    /// label.text = "\(failure.entity): next try \(failure.retryAt.formatted(date: .omitted, time: .standard))"
    /// ```
    public let retryAt: Date

    /// A failure with these parts.
    ///
    /// ```swift
    /// let failure = SyncPullFailure(entity: "Task", error: SyncTransportError.closed, attempts: 1, since: Date(),
    ///                               retryAt: Date().addingTimeInterval(0.25))
    /// ```
    public init(entity: String, error: any Error, attempts: Int, since: Date, retryAt: Date) {
        self.entity = entity
        self.error = error
        self.attempts = attempts
        self.since = since
        self.retryAt = retryAt
    }
}
