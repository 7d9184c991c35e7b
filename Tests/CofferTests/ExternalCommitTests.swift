@testable import Coffer
import CofferTestSupport
import Foundation
import Testing

/// How a store tells its observers of other processes' commits, from LMDB's last
/// transaction id (see `CommitPublisher`).
@Suite struct ExternalCommitTests {
    /// Random runs of this process's commits (writing or not), other processes' commits and
    /// checks, against the model: a commit or check tells "another process committed"
    /// exactly when one did since the observers were last told, and a commit of this process
    /// keeps its ids when no other process's commit is to be told with it.
    @Test(arguments: 1...6) func otherProcessesCommitsAreToldExactlyWhenTheyHappened(seed: UInt64) {
        var generator = SplitMix64(state: seed)
        let publisher = CommitPublisher()
        let received = Recorder()
        var last = UInt64.random(in: 1...1_000_000, using: &generator)
        _ = publisher.add(ChangeHandler(committed: { received.append($0) }, closed: {}), lastCommitted: last)
        var untold = false
        var nextId: Id = 1
        for _ in 0..<3000 {
            let before = received.count
            switch Int.random(in: 0..<4, using: &generator) {
            case 0:
                last += UInt64.random(in: 1...3, using: &generator)
                untold = true
                continue
            case 1, 2:
                let wrote = Bool.random(using: &generator)
                var log = ChangeLog()
                if wrote {
                    log.recordPut("Note", nextId, isInsert: true)
                    nextId += 1
                    last += 1
                }
                // Another process may commit right after this one, before the id is read.
                if Int.random(in: 0..<8, using: &generator) == 0 {
                    last += 1
                    untold = true
                }
                publisher.beginCommit()
                publisher.publish(log, committed: (wrote: wrote, last: last))
                let told = received.count > before ? received.last : nil
                #expect((told?.isExternal ?? false) == untold)
                #expect((told != nil) == (wrote || untold))
                if wrote && !untold { #expect(told?.entities["Note"]?.inserted == [nextId - 1]) }
            default:
                publisher.beginCommit()
                publisher.publishExternal(last: last)
                let told = received.count > before ? received.last : nil
                #expect((told != nil) == untold && (told?.isExternal ?? true))
            }
            untold = false
        }
    }

    /// With nobody observing nothing is tracked; the next observer starts from the id read
    /// at its registration, so earlier commits of other processes are not told.
    @Test func trackingStartsWithTheFirstObserver() {
        let publisher = CommitPublisher()
        let received = Recorder()
        let token = publisher.add(ChangeHandler(committed: { received.append($0) }, closed: {}), lastCommitted: 10)
        publisher.remove(token)
        _ = publisher.add(ChangeHandler(committed: { received.append($0) }, closed: {}), lastCommitted: 15)
        publisher.beginCommit()
        publisher.publishExternal(last: 15)
        #expect(received.count == 0)
        publisher.beginCommit()
        publisher.publishExternal(last: 16)
        #expect(received.count == 1 && received.last.isExternal)
        // Not known at registration (the store closing): the next check tells once.
        let unknown = CommitPublisher()
        let told = Recorder()
        _ = unknown.add(ChangeHandler(committed: { told.append($0) }, closed: {}), lastCommitted: nil)
        unknown.beginCommit()
        unknown.publishExternal(last: 3)
        unknown.beginCommit()
        unknown.publishExternal(last: 3)
        #expect(told.count == 1)
    }

    /// Emptying an entity that holds nothing commits no transaction: observers hear nothing,
    /// not a commit of another process.
    @Test func removingAllOfNothingTellsNothing() async throws {
        try withStore { store in
            let messages = store.box(for: Message.self)
            let received = Recorder()
            let token = store.addChangeHandler { received.append($0) }
            defer { store.removeChangeHandler(token) }
            #expect(try messages.removeAll() == 0)
            try store.checkForExternalCommits()
            #expect(received.count == 0)
        }
    }
}
