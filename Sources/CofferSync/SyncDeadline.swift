import Foundation

/// Bounds an operation in time without waiting for it to end.
///
/// A task group cannot do this: it waits for every child, so an operation that ignores
/// cancellation holds the caller until it ends. postgres-nio's connect is one: when the
/// peer resets the connection before the first read (a load balancer without a backend, a
/// proxy refusing late), NIO may never report the reset (swift-nio issue 1756) and the
/// connect never completes. Here the operation runs in a task of its own; the caller resumes
/// at the first of its result, the deadline, or the caller's cancellation, and a result that
/// arrives after that is handed to `abandon` (to close a connection nobody will use).
enum SyncDeadline {
    /// Returns `operation`'s result, or throws `expired()` once `timeout` has passed, or
    /// `CancellationError` when the calling task is cancelled first.
    ///
    /// ```swift
    /// let connection = try await SyncDeadline.run(.seconds(10), expired: { SyncTransportError.timedOut(...) },
    ///                                             abandon: { PostgresTransport.abandon($0) }) {
    ///     try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger)
    /// }
    /// ```
    static func run<T: Sendable>(_ timeout: Duration,
                                 expired: @escaping @Sendable () -> any Error,
                                 abandon: @escaping @Sendable (T) -> Void = { _ in },
                                 onExpiry: @escaping @Sendable () -> Void = {},
                                 _ operation: @escaping @Sendable () async throws -> T) async throws -> T {
        let race = Race<T>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
                guard race.start(continuation) else { return }  // cancelled before it began
                let work = Task {
                    do {
                        let value = try await operation()
                        if !race.finish(.success(value)) { abandon(value) }
                    } catch {
                        race.finish(.failure(error))
                    }
                }
                let timer = Task {
                    do {
                        try await Task.sleep(for: timeout)
                    } catch {
                        return  // the operation ended first
                    }
                    if race.finish(.failure(expired())) {
                        onExpiry()
                        work.cancel()
                    }
                }
                race.onFinish { timer.cancel() }
                race.onCancel {
                    onExpiry()
                    work.cancel()
                }
            }
        } onCancel: {
            // The caller gave up: the operation is stopped as at the deadline (a connection
            // it opens later is abandoned when it arrives).
            if race.finish(.failure(CancellationError())) { race.cancelled() }
        }
    }

    /// The one continuation of a race, resumed by whoever finishes first.
    private final class Race<T: Sendable>: @unchecked Sendable {
        private let lock = NSLock()
        private var continuation: CheckedContinuation<T, any Error>?
        private var outcome: Result<T, any Error>?
        private var finished = false
        private var cleanup: (@Sendable () -> Void)?

        /// Installs the continuation and returns true; when the race was decided before (a
        /// cancellation before the continuation existed), resumes it at once and returns false.
        func start(_ continuation: CheckedContinuation<T, any Error>) -> Bool {
            lock.lock()
            if let outcome {
                lock.unlock()
                continuation.resume(with: outcome)
                return false
            }
            self.continuation = continuation
            lock.unlock()
            return true
        }

        /// Runs `body` once the race is decided (now, if it is).
        func onFinish(_ body: @escaping @Sendable () -> Void) {
            lock.lock()
            if finished {
                lock.unlock()
                body()
                return
            }
            cleanup = body
            lock.unlock()
        }

        private var cancellation: (@Sendable () -> Void)?
        private var wasCancelled = false

        /// Runs `body` when the caller cancels (now, if it has).
        func onCancel(_ body: @escaping @Sendable () -> Void) {
            lock.lock()
            if wasCancelled {
                lock.unlock()
                body()
                return
            }
            cancellation = body
            lock.unlock()
        }

        /// The caller cancelled and that decided the race: stops the operation.
        func cancelled() {
            lock.lock()
            wasCancelled = true
            let body = cancellation
            cancellation = nil
            lock.unlock()
            body?()
        }

        /// Decides the race with `result`; false when it was decided before.
        @discardableResult
        func finish(_ result: Result<T, any Error>) -> Bool {
            lock.lock()
            guard !finished else {
                lock.unlock()
                return false
            }
            finished = true
            let waiting = continuation
            continuation = nil
            if waiting == nil { outcome = result }
            let after = cleanup
            cleanup = nil
            lock.unlock()
            waiting?.resume(with: result)
            after?()
            return true
        }
    }
}
