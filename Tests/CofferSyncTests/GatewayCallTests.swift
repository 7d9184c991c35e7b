@testable import CofferSync
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// A gateway call's continuation is resumed exactly once, with whichever of the reply, the
/// caller's cancellation and the transport's closing came first, in any order and from any
/// thread (a second resume would stop the process).
@Suite struct GatewayCallTests {
    struct Marker: Error, Equatable { let value: Int }

    @Test func theFirstOutcomeWinsInAnyOrder() async throws {
        var random = SplitMix64(state: 11)
        for round in 0..<500 {
            let call = GatewayCall()
            let finishers = Int(random.next() % 3) + 1
            let finishEarly = random.next() % 2 == 0
            let outcome = await withTaskGroup(of: Void.self, returning: Result<Int, any Error>.self) { group in
                func finisher(_ value: Int) -> @Sendable () async -> Void {
                    {
                        await Task.yield()
                        call.finish(.failure(Marker(value: value)))
                    }
                }
                if finishEarly { call.finish(.failure(Marker(value: -1))) }
                for value in 0..<finishers { group.addTask(operation: finisher(value)) }
                do {
                    _ = try await withCheckedThrowingContinuation { continuation in
                        _ = call.start(continuation)
                    }
                    return .success(0)
                } catch {
                    return .failure(error)
                }
            }
            switch outcome {
            case .success: Issue.record("round \(round): a reply that was never given")
            case .failure(let error):
                let marker = try #require(error as? Marker)
                if finishEarly {
                    #expect(marker.value == -1, "round \(round)")
                } else {
                    #expect((0..<finishers).contains(marker.value), "round \(round)")
                }
            }
        }
    }

    @Test func startAfterFinishReportsTheCallFinished() async throws {
        let call = GatewayCall()
        call.finish(.failure(CancellationError()))
        let started = LockedState(true)
        await #expect(throws: CancellationError.self) {
            _ = try await withCheckedThrowingContinuation { continuation in
                started.withLock { $0 = call.start(continuation) }
            }
        }
        #expect(started.withLock { $0 } == false)
    }
}
