// Applying Pulled Changes: the store's side of sync, which an engine of its own reaches
// through the store's sync hooks.
@_spi(CofferSync) import Coffer
import CofferSync

/// Applying Pulled Changes: one page, by hand.
func applyOnePage(store: Store, transport: PostgresTransport, stream: String) async throws {
    let client = try store.syncClientId()                  // this replica's id toward servers
    var cursor = try store.syncCursor(entity: "Todo", stream: stream)   // "0" at first
    let page = try await transport.pull(entity: "Todo", cursor: cursor, limit: 1000)
    let summary = try store.applyPulledPage(page, entity: "Todo", stream: stream)
    cursor = summary.cursor                                 // stored with the page's changes
    _ = (client, cursor)
}
