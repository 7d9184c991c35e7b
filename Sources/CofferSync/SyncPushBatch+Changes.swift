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
        guard let last = changes.last else { return nil }
        var json = "["
        var count = 0
        var refused: [SyncRejection] = []
        var lastSent: UInt64 = 0
        for change in changes {
            if change.operation == .upsert && !change.objectExists { continue }
            if change.operation == .upsert, let field = change.fields.first(where: { $0.json.map(Self.holdsNul) ?? false }) {
                refused.append(SyncRejection(mid: change.mid, reason: Self.nulReason(field)))
                continue
            }
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
        self.init(json: json, count: count, lastMid: last.mid)
        refusedLocally = refused
        lastSentMid = lastSent
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
