@testable import Coffer
import Foundation
import Testing

/// Waits for the controller's next change; fails (instead of hanging) after a generous
/// safety limit. Not a timing assertion: a correct controller answers at once.
func nextChange<E>(_ controller: QueryController<E>) async throws -> QueryChange<E> {
    try await withThrowingTaskGroup(of: QueryChange<E>?.self) { group in
        group.addTask {
            var iterator = controller.changes().makeAsyncIterator()
            return try await iterator.next()
        }
        group.addTask {
            try await Task.sleep(nanoseconds: 60_000_000_000)
            return nil
        }
        let first = try await group.next() ?? nil
        group.cancelAll()
        return try #require(first, "the controller emitted no change")
    }
}

/// Applies a change set to the previous window the way a list view does (see
/// `QueryChange`) and returns the rows it ends with.
func apply<E: Entity>(_ change: QueryChange<E>, to old: [E]) -> [E] {
    var rows = old
    for index in (change.deleted + change.moved.map(\.from)).sorted(by: >) { rows.remove(at: index) }
    let insertions = change.inserted.map { ($0, change.objects[$0]) }
        + change.moved.map { ($0.to, $0.isUpdated ? change.objects[$0.to] : old[$0.from]) }
    for (index, row) in insertions.sorted(by: { $0.0 < $1.0 }) { rows.insert(row, at: index) }
    for index in change.updated {
        if let now = rows.firstIndex(where: { $0.id == old[index].id }) { rows[now] = change.objects[now] }
    }
    return rows
}
