@testable import Coffer
import CofferTestSupport
import Foundation
import Testing

/// The byte-keyed group table of GROUP BY on text: it finds exactly the groups a dictionary
/// of the same keys finds, through growth and colliding probes.
@Suite struct SQLTextGroupsTests {
    @Test(arguments: [1, 2, 3]) func findsWhatADictionaryFinds(seed: UInt64) {
        var random = SplitMix64(state: seed)
        let groups = SQLTextGroups()
        var expected: [[UInt8]: Int] = [:]
        // Short keys from a small alphabet repeat often; lengths cross the 8-byte words.
        for step in 0..<20_000 {
            let length = Int.random(in: 0...19, using: &random)
            let key = (0..<length).map { _ in UInt8.random(in: 97...100, using: &random) }
            key.withUnsafeBytes { bytes in
                let hash = SQLTextGroups.hash(bytes)
                let found = groups.group(of: bytes, hash: hash)
                #expect(found == expected[key], "step \(step): \(key)")
                if found == nil {
                    groups.add(bytes, hash: hash, group: expected.count)
                    expected[key] = expected.count
                }
            }
        }
        #expect(expected.count > 1_000, "the table grew many times")
        // Every key is found again after all the growth.
        for (key, group) in expected {
            key.withUnsafeBytes { bytes in #expect(groups.group(of: bytes, hash: SQLTextGroups.hash(bytes)) == group) }
        }
    }

    @Test func keysThatDifferOnlyInLengthOrTheLastByteAreDifferentGroups() {
        let groups = SQLTextGroups()
        let keys: [[UInt8]] = [[], [0], [0, 0], Array("team1".utf8), Array("team10".utf8), Array("team1\u{0}".utf8),
                               Array("abcdefgh".utf8), Array("abcdefgi".utf8), Array("abcdefghX".utf8)]
        for (index, key) in keys.enumerated() {
            key.withUnsafeBytes { groups.add($0, hash: SQLTextGroups.hash($0), group: index) }
        }
        for (index, key) in keys.enumerated() {
            key.withUnsafeBytes { #expect(groups.group(of: $0, hash: SQLTextGroups.hash($0)) == index, "\(key)") }
        }
    }
}
