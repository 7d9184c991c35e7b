@_spi(CofferSync) import Coffer
import Foundation

extension SyncPushBatch {
    /// Encodes outbox changes as the JSON array `coffer_push` takes. Field values are already
    /// JSON text (the export format); hybrid clocks go as decimal text, since jsonb numbers
    /// would lose digits past 2^53. An update of an object removed since it was taken
    /// (`objectExists` false) is left out: its values are gone and its delete follows in a
    /// later change; ``lastMid`` still covers it.
    ///
    /// Returns nil for an empty list.
    init?(changes: [SyncChange]) {
        guard let last = changes.last else { return nil }
        var json = "["
        var count = 0
        for change in changes {
            if change.operation == .upsert && !change.objectExists { continue }
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
