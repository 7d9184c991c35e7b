import Coffer
import Foundation

/// The synced benchmark entity: a title, a counter, a score and a flag, the shape of a to-do
/// item or a message header.
@Sync
struct SyncBenchItem: Entity {
    var id: Id = 0
    @Index var title: String
    var count: Int
    var score: Double
    var done: Bool
}

extension SyncBenchItem {
    /// Object `number` of the workload.
    init(number: Int) {
        title = "item \(number)"
        count = number
        score = Double(number) / 7
        done = number % 2 == 0
    }
}
