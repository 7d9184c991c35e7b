/// The engine of the live objects (``LiveResults``, ``LiveObject``, ``LiveValue``,
/// ``LiveWindow``): each owns one driver, which reads the first value at once and then runs a
/// detached task that waits for the commits that concern the object, computes the next value
/// off the object's actor (snapshot reads, decoding), and hands it to the object on that
/// actor.
///
/// Invariants:
/// - One delivery at a time: the task awaits each hop to the actor before it computes the
///   next value, and commits meanwhile coalesce in the observer's channel, so a slow actor
///   gets the latest state, never a queue of stale ones.
/// - The task holds the object and the driver weakly: dropping the object drops the driver,
///   whose `deinit` cancels the task; the observation channel finishes and the store forgets
///   the handler.
/// - `generation` changes only on the object's actor (or before the object is shared);
///   deliveries of a loop started for an older generation (the object was re-targeted) are
///   ignored and end that loop.
/// - The first value is shown before the loop starts, so the loop never delivers before it.
final class LiveDriver: @unchecked Sendable {
    /// Moves state that is not `Sendable` (an iterator, a subscription) into the task that
    /// owns it from then on; nothing else touches it after the hand-over.
    struct Handover<State>: @unchecked Sendable {
        let state: State
    }

    /// What starting an observation gives: the current value and the step that waits for and
    /// computes each later one (nil: observation ended), or why the value could not be read.
    typealias Start<Value> = Result<(current: Value, step: Handover<() async throws -> Value?>), any Error>

    let actor: any Actor
    private var task: Task<Void, Never>?
    private var generation = 0
    /// How many values the loop delivered (changed on the actor; tests count them).
    private(set) var deliveries = 0

    init(on actor: any Actor) {
        self.actor = actor
    }

    deinit {
        task?.cancel()
    }

    /// Asserts (in debug builds) that the caller runs on the object's actor: the app
    /// re-targets a live object there, where its properties change.
    func assertOnActor(_ type: String) {
        actor.assertIsolated("a \(type) is re-targeted on the actor it was made for")
    }

    /// Stops the running loop and starts observing anew: `begin` reads the current value,
    /// `show` puts a value into `owner` (on the actor, or now when the caller is), `fail` an
    /// error (observation stops).
    func restart<Owner: AnyObject & Sendable, Value: Sendable>(
        _ owner: Owner,
        begin: () -> Start<Value>,
        show: @escaping @Sendable (Owner, Value) -> Void,
        fail: @escaping @Sendable (Owner, any Error) -> Void
    ) {
        task?.cancel()
        task = nil
        generation &+= 1
        let generation = generation
        switch begin() {
        case .success(let (current, step)):
            show(owner, current)
            // Code that reacted to `show` at once may have re-targeted the owner: that
            // restart's loop stands, this one does not start.
            guard generation == self.generation else { return }
            task = Task.detached(priority: .userInitiated) { [weak owner, weak self] in
                let next = step.state
                while !Task.isCancelled {
                    let outcome: Result<Value?, any Error>
                    do {
                        outcome = .success(try await next())
                    } catch {
                        outcome = .failure(error)
                    }
                    guard let owner, let driver = self else { return }
                    let stop = await driver.deliver(outcome, generation: generation, to: owner, show: show, fail: fail,
                                                    on: driver.actor)
                    guard !stop, case .success(.some) = outcome else { return }
                }
            }
        case .failure(let error):
            fail(owner, error)
        }
    }

    /// Puts an outcome of the loop into the owner on its actor; true: stop the loop (the
    /// owner was re-targeted, observation ended or failed).
    private func deliver<Owner, Value>(
        _ outcome: Result<Value?, any Error>, generation: Int, to owner: Owner,
        show: (Owner, Value) -> Void, fail: (Owner, any Error) -> Void, on actor: isolated any Actor
    ) -> Bool {
        guard generation == self.generation else { return true }
        switch outcome {
        case .success(let value?):
            deliveries += 1
            show(owner, value)
            return false
        case .success(nil):
            return true
        case .failure(let error):
            fail(owner, error)
            return true
        }
    }

    /// Starts observing the page of `query`'s result given by `offset` and `limit`.
    static func results<E: Entity>(_ query: Query<E>, offset: Int, limit: Int?) -> Start<[E]> {
        var iterator = QueryResults(query: query, offset: offset, limit: limit).makeAsyncIterator()
        do {
            let current = try iterator.current()
            return .success((current, Handover(state: { try await iterator.next() })))
        } catch {
            iterator.cancel()
            return .failure(error)
        }
    }
}
