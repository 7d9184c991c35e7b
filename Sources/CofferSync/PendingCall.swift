import Foundation

/// A transport call running while the replica does its own work: ``SyncReplica`` asks for
/// the next pull page while it applies the current one, and takes and encodes the next push
/// batch while the server applies the current one. The replica has at most one call in
/// flight, so calls on the transport never overlap.
struct PendingCall<Value: Sendable>: Sendable {
    private let task: Task<Value, any Error>

    /// Starts `call` at once.
    init(_ call: @escaping @Sendable () async throws -> Value) {
        task = Task { try await call() }
    }

    /// The call's answer, or its error. Cancelling the waiting task cancels the call (a
    /// stop is as prompt as when the replica waits for each call).
    var value: Value {
        get async throws {
            try await withTaskCancellationHandler { try await task.value } onCancel: { task.cancel() }
        }
    }

    /// Waits for a call whose answer will not be used to end, so that it is not still
    /// running on the transport when the replica makes its next call (cancelled if the
    /// waiting task is).
    func drop() async {
        _ = await withTaskCancellationHandler { await task.result } onCancel: { task.cancel() }
    }
}
