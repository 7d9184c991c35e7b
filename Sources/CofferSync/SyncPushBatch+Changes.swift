@_spi(CofferSync) import Coffer
import Foundation

extension SyncPushBatch {
    /// Encodes outbox changes as the JSON array `coffer_push` takes. Field values are already
    /// JSON text (the export format); hybrid clocks go as decimal text, since jsonb numbers
    /// would lose digits past 2^53. An update of an object removed since it was taken
    /// (`objectExists` false) is left out: its values are gone and its delete follows in a
    /// later change; ``lastMid`` still covers it.
    ///
    /// A change whose values hold U+0000 anywhere (a string, an array element, a document's
    /// string or key, an embedded leaf) is left out too and listed in ``refusedLocally``: the
    /// server's `text` and `jsonb` cannot hold it, and the batch's cast to `jsonb` would fail
    /// as a whole, every time. The pusher records it as a rejection, as if the server had
    /// refused it.
    ///
    /// Returns nil for an empty list.
    init?(changes: [SyncChange]) {
        guard let (batch, _) = Self.encoding(changes[...], byteLimit: .max, largestChange: .max) else { return nil }
        self = batch
    }

    /// The largest change a push sends, in bytes of its JSON (``SyncChange/wireSizeEstimate``):
    /// 64 MiB. A batch goes to the server as one text value cast to `jsonb`, which holds at
    /// most 268,435,455 bytes, and PostgreSQL allocates at most 1 GB at once: the server
    /// keeps the batch's text, its `jsonb`, each value taken out of it and the row written
    /// (with its trigger's copies) at the same time, and a pull sends the row back inside a
    /// page (a `bytea` as base64, a string escaped as in the push). A quarter of `jsonb`'s
    /// limit leaves room for all of them, and for a whole batch beside the largest change.
    static let largestChange = 64 << 20

    /// Encodes `changes` from the first one on, as ``init(changes:)`` does, until the next
    /// change would take the batch's JSON past `byteLimit` bytes (the first one always goes,
    /// so a batch holds at least one change). A change larger than `largestChange` is refused
    /// like one holding U+0000 (listed in ``refusedLocally``), since the server could never
    /// take it. Returns the batch and how many changes of `changes` it covers (the rest go in
    /// the next batch); nil for an empty list. Each change is encoded once: its size is known
    /// beforehand (``SyncChange/wireSizeEstimate``).
    static func encoding(_ changes: ArraySlice<SyncChange>, byteLimit: Int, largestChange: Int) -> (batch: SyncPushBatch, covered: Int)? {
        guard !changes.isEmpty else { return nil }
        var json = "["
        var count = 0
        var covered = 0
        var bytes = 2
        var refused: [SyncRejection] = []
        var lastSent: UInt64 = 0
        for change in changes {
            if change.operation == .upsert && !change.objectExists {
                covered += 1
                continue
            }
            let size = change.wireSizeEstimate
            if count > 0, bytes + size > byteLimit { break }
            covered += 1
            if size > largestChange {
                refused.append(SyncRejection(mid: change.mid, reason: Self.tooLargeReason(change, size: size, limit: largestChange)))
                continue
            }
            if change.operation == .upsert, let field = change.fields.first(where: { $0.json.map(Self.holdsNul) ?? false }) {
                refused.append(SyncRejection(mid: change.mid, reason: Self.nulReason(field)))
                continue
            }
            bytes += size
            lastSent = change.mid
            if count > 0 { json += "," }
            count += 1
            json += "{\"mid\":\(change.mid),\"entity\":"
            Self.appendString(change.entity, to: &json)
            json += ",\"id\":\"\(change.syncId.uuidString.lowercased())\",\"hlc\":\"\(change.clock)\""
            switch change.operation {
            case .delete:
                json += ",\"op\":\"delete\"}"
            case .upsert:
                json += ",\"op\":\"upsert\",\"create\":\(change.isCreation ? "true" : "false"),\"fields\":{"
                for (index, field) in change.fields.enumerated() {
                    if index > 0 { json += "," }
                    Self.appendString(field.name, to: &json)
                    json += ":" + (field.json ?? "null")
                }
                json += "},\"clocks\":{"
                for (index, field) in change.fields.enumerated() {
                    if index > 0 { json += "," }
                    Self.appendString(field.name, to: &json)
                    json += ":\"\(field.clock)\""
                }
                json += "}}"
            }
        }
        json += "]"
        var batch = SyncPushBatch(json: json, count: count, lastMid: changes[changes.startIndex + covered - 1].mid)
        batch.refusedLocally = refused
        batch.lastSentMid = lastSent
        return (batch, covered)
    }

    /// The reason a change too large to send is refused: the entity, the object and the size.
    static func tooLargeReason(_ change: SyncChange, size: Int, limit: Int) -> String {
        "\(change.entity) \(change.syncId.uuidString.lowercased()): the change takes about \(size) bytes, "
            + "more than a push sends (\(limit) bytes)"
    }

    /// The reason a change holding U+0000 in `field` is refused: the server's own words for a
    /// text field.
    static func nulReason(_ field: SyncFieldValue) -> String {
        "field \"\(field.name)\": \(field.type.isDocument ? "jsonb" : "text") cannot hold U+0000"
    }

    /// Whether JSON text holds the escape of U+0000 (`\u0000`), which is how every encoder
    /// of field values writes that character. Outside strings JSON has no backslash, and
    /// inside one each escape is skipped whole, so an escaped backslash followed by `u0000`
    /// is not taken for one.
    static func holdsNul(_ json: String) -> Bool {
        var bytes = json.utf8.makeIterator()
        while let byte = bytes.next() {
            guard byte == UInt8(ascii: "\\") else { continue }
            guard bytes.next() == UInt8(ascii: "u") else { continue }
            var digits = 0
            while digits < 4, bytes.next() == UInt8(ascii: "0") { digits += 1 }
            if digits == 4 { return true }
        }
        return false
    }

    /// Appends `text` as a JSON string literal.
    static func appendString(_ text: String, to json: inout String) {
        json += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": json += "\\\""
            case "\\": json += "\\\\"
            case "\n": json += "\\n"
            case "\r": json += "\\r"
            case "\t": json += "\\t"
            case _ where scalar.value < 0x20:
                json += "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count) + String(scalar.value, radix: 16)
            default: json.unicodeScalars.append(scalar)
            }
        }
        json += "\""
    }
}
