import Foundation

// Stand-ins for the few SwiftUI and UIKit types the article's examples use, with the same
// shapes, for platforms without those frameworks (Linux). Where the frameworks exist, the
// examples compile against them instead.

#if !canImport(SwiftUI)
@MainActor protocol View {
    associatedtype Body: View
    var body: Body { get }
}

/// The body of a primitive view, which is never asked for one.
extension Never: View {
    var body: Never { switch self {} }
}

extension Optional: View where Wrapped: View {
    var body: Never { preconditionFailure("a primitive view has no body") }
}

@resultBuilder enum ViewBuilder {
    static func buildBlock<V: View>(_ content: V) -> V { content }
    static func buildOptional<V: View>(_ content: V?) -> V? { content }
}

@propertyWrapper struct State<Value> {
    var wrappedValue: Value
}

struct Text: View {
    let text: String
    init(_ text: String) { self.text = text }
    var body: Never { preconditionFailure("a primitive view has no body") }
}

struct List: View {
    let rows: Int
    init<Data: RandomAccessCollection, ID: Hashable, Row: View>(_ data: Data, id: KeyPath<Data.Element, ID>,
                                                                 @ViewBuilder rowContent: (Data.Element) -> Row) {
        rows = data.count
    }
    var body: Never { preconditionFailure("a primitive view has no body") }
}

struct NavigationLink: View {
    let title: String
    init<Destination: View>(_ title: String, @ViewBuilder destination: () -> Destination) { self.title = title }
    var body: Never { preconditionFailure("a primitive view has no body") }
}

extension View {
    func navigationTitle(_ title: String) -> Self { self }
    func overlay<Overlay: View>(@ViewBuilder content: () -> Overlay) -> Self { self }
}
#endif

#if !canImport(UIKit)
/// A table view that records the batch updates it is given.
@MainActor final class UITableView {
    enum RowAnimation { case fade, none }
    private(set) var updates: [String] = []
    func performBatchUpdates(_ updates: () -> Void) { updates() }
    func deleteRows(at indexPaths: [IndexPath], with animation: RowAnimation) { updates.append("delete \(indexPaths)") }
    func insertRows(at indexPaths: [IndexPath], with animation: RowAnimation) { updates.append("insert \(indexPaths)") }
    func reloadRows(at indexPaths: [IndexPath], with animation: RowAnimation) { updates.append("reload \(indexPaths)") }
    func moveRow(at from: IndexPath, to: IndexPath) { updates.append("move \(from) \(to)") }
}

extension IndexPath {
    init(row: Int, section: Int) { self.init(indexes: [section, row]) }
}
#endif
