import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One call's continuation, resumed once: by the reply, by the caller's cancellation or by
/// closing the transport, whichever comes first.
final class GatewayCall: Sendable {
    typealias Reply = (data: Data, response: URLResponse)
    private typealias Continuation = CheckedContinuation<Reply, any Error>
    private enum Phase {
        case created
        case waiting(Continuation)
        /// Finished before the continuation was there: it is resumed with this at once.
        case finishedEarly(Result<Reply, any Error>)
        case finished
    }

    private let phase = LockedState(Phase.created)

    /// Hands the call its continuation; false when the call finished already (it is then
    /// resumed at once).
    func start(_ continuation: CheckedContinuation<Reply, any Error>) -> Bool {
        let early = phase.withLock { phase -> Result<Reply, any Error>? in
            switch phase {
            case .created:
                phase = .waiting(continuation)
                return nil
            case .finishedEarly(let result):
                phase = .finished
                return result
            case .waiting, .finished:
                assertionFailure("a call started twice")
                return nil
            }
        }
        guard let early else { return true }
        continuation.resume(with: early)
        return false
    }

    func finish(_ result: Result<Reply, any Error>) {
        let waiting = phase.withLock { phase -> Continuation? in
            switch phase {
            case .created:
                phase = .finishedEarly(result)
                return nil
            case .waiting(let continuation):
                phase = .finished
                return continuation
            case .finishedEarly, .finished:
                return nil
            }
        }
        waiting?.resume(with: result)
    }
}
