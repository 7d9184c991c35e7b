@testable import Coffer
import Foundation
import Testing

/// The debug-build invariant checks (`checkInvariants()` of `PostingList`,
/// `PostingBlock.Writer`, `ListDiff`, `MatchTracker`, `RecordFields.Shortcut`, the straight
/// path's `fieldLoopAgrees`) run inside the operations these tests drive on random input, so
/// a broken invariant stops them with an assertion; the tests also compare the results with
/// answers computed the slow way.
@Suite struct InvariantTests {
    /// Applying a diff of random lists (small ones, and long ones with a few changes) to the
    /// old list gives the new list.
    @Test func listDiffAppliedToTheOldListGivesTheNewList() {
        var random = SplitMix64(state: 30)
        for round in 0..<500 {
            let size = round % 10 == 0 ? 5_000 : Int.random(in: 0...40, using: &random)
            let old = Array(1...Id(size + 1)).filter { _ in Int.random(in: 0..<5, using: &random) > 0 }.shuffled(using: &random)
            var new = old.filter { _ in Int.random(in: 0..<8, using: &random) > 0 }
            for _ in 0..<Int.random(in: 0...6, using: &random) {
                new.insert(Id(size + 2) + Id(new.count), at: Int.random(in: 0...new.count, using: &random))
            }
            if new.count > 2 { new.swapAt(Int.random(in: 0..<new.count, using: &random), Int.random(in: 0..<new.count, using: &random)) }
            let diff = ListDiff(old: old, new: new)
            #expect(diff.applied(to: old, new: new) == new)
            #expect(diff.isEmpty == (old == new))
        }
    }

    /// Lists made from postings and their unions keep ascending ids, one count per id and
    /// counts equal to their numbers of positions.
    @Test func postingListUnionsKeepTheirInvariants() {
        var random = SplitMix64(state: 31)
        for _ in 0..<300 {
            let detail = [PostingList.Detail.ids, .counts, .positions][Int.random(in: 0..<3, using: &random)]
            var lists: [PostingList] = []
            var expected: [Id: Int] = [:]
            for _ in 0..<Int.random(in: 0...5, using: &random) {
                var postings: [Id: [UInt32]] = [:]
                for _ in 0..<Int.random(in: 0...30, using: &random) {
                    let id = Id.random(in: 1...60, using: &random)
                    postings[id] = (0..<UInt32.random(in: 1...4, using: &random)).map { $0 * 3 + UInt32(lists.count) }
                }
                for (id, positions) in postings { expected[id, default: 0] += positions.count }
                lists.append(PostingList(postings, detail: detail))
            }
            let union = PostingList.union(lists)
            union.checkInvariants()
            #expect(union.ids == expected.keys.sorted())
            if detail >= .counts { #expect(union.ids.map { union.count(of: $0) } == union.ids.map { expected[$0] }) }
        }
    }

    /// Blocks written from ascending entries read back as those entries, each block's ids
    /// below the next block's first id.
    @Test func postingBlocksReadBackAsWritten() throws {
        var random = SplitMix64(state: 32)
        for _ in 0..<50 {
            var writer = PostingBlock.Writer()
            var ids: [Id] = []
            var id: Id = 0
            for _ in 0..<Int.random(in: 1...2_000, using: &random) {
                id += Id.random(in: 1...1_000, using: &random)
                ids.append(id)
                var positions: [UInt8] = []
                PostingBlock.encodePositions((0..<UInt32.random(in: 1...20, using: &random)).map { $0 * 7 }, to: &positions)
                positions.withUnsafeBytes { writer.append(id, positions: $0) }
            }
            let blocks = writer.finish()
            var list = PostingList()
            for block in blocks {
                let intact = block.bytes.withUnsafeBytes { PostingBlock.decode($0, firstId: block.firstId, detail: .positions, into: &list) }
                #expect(intact)
            }
            list.checkInvariants()
            #expect(list.ids == ids)
            #expect(blocks.count > 1 || ids.count < 50)
        }
    }
}
