@_spi(CofferSync) import Coffer
import Foundation

extension SyncReplica {
    /// Pulls every entity, page by page, from its stored cursor to the server's horizon. Each
    /// page is applied with its cursor in one LMDB transaction, so an interruption anywhere
    /// resumes from the last applied page.
    func pullEntities() async throws {
        channel.update { $0.phase = .pulling }
        let stream = transport.stream
        for entity in entityNames {
            var cursor = try store.syncCursor(entity: entity, stream: stream)
            while true {
                try Task.checkCancellation()
                let page = try await transport.pull(entity: entity, cursor: cursor, limit: options.pullPageSize)
                let summary = try store.applyPulledPage(page, entity: entity, stream: stream)
                channel.update { status in
                    status.pulled += summary.upserted + summary.deleted
                    status.conflicts += summary.conflicts
                }
                guard summary.more, summary.cursor != cursor else { break }
                cursor = summary.cursor
            }
        }
        let pending = try store.pendingSyncCount()
        channel.update { $0.pending = pending }
    }
}
