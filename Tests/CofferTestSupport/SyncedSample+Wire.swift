import Coffer
import Foundation

/// Values in the sync wire format (the JSON of `coffer_push` and `coffer_pull`), for tests
/// that build batches and pages by hand.
///
/// ```swift
/// SyncWire.double(-0.0)        // "\"-0\""
/// SyncWire.string("a\u{0}b")   // {"nul": "YQBi"}
/// ```
package enum SyncWire {
    /// A double: the shortest decimal, or `"NaN"`, `"Infinity"`, `"-Infinity"`, `"-0"`.
    package static func double(_ value: Double) -> String {
        if value.isNaN { return "\"NaN\"" }
        if value == .infinity { return "\"Infinity\"" }
        if value == -.infinity { return "\"-Infinity\"" }
        if value == 0 && value.sign == .minus { return "\"-0\"" }
        return "\(value)"
    }

    /// A string: a JSON string literal, or `{"nul": "<base64 of its UTF-8>"}` when it holds
    /// U+0000 (which `text` and `jsonb` cannot).
    package static func string(_ value: String) -> String {
        value.contains("\u{0}") ? "{\"nul\": \"\(Data(value.utf8).base64EncodedString())\"}" : literal(value)
    }

    /// A JSON string literal (control characters escaped).
    package static func literal(_ value: String) -> String {
        var result = "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case _ where scalar.value < 0x20: result += String(format: "\\u%04x", scalar.value)
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }

    /// An array of UUIDs.
    package static func uuids(_ values: [UUID]) -> String {
        "[" + values.map { "\"\($0.uuidString.lowercased())\"" }.joined(separator: ", ") + "]"
    }
}

extension SyncedSample {
    /// The wire value of every stored field but the link, by stored name, in declaration
    /// order; `document` is the document's JSON as the test wants it sent.
    ///
    /// ```swift
    /// let fields = sample.wireFields(document: #"{"a": 1}"#)
    /// ```
    package func wireFields(document: String) -> [(String, String)] {
        let numbers = { (values: [String]) in "[" + values.joined(separator: ", ") + "]" }
        var fields: [(String, String)] = [
            ("flag", "\(flag)"), ("int", "\(int)"), ("int8", "\(int8)"), ("int16", "\(int16)"),
            ("int32", "\(int32)"), ("int64", "\(int64)"), ("uint8", "\(uint8)"), ("uint16", "\(uint16)"),
            ("uint32", "\(uint32)"), ("uint64", "\"\(uint64)\""), ("uint", "\"\(uint)\""),
            ("float", SyncWire.double(Double(float))), ("double", SyncWire.double(double)), ("string", SyncWire.string(string)),
            ("date", SyncWire.double(date.timeIntervalSinceReferenceDate)), ("data", "\"\(data.base64EncodedString())\""),
            ("bytes", "\"\(Data(bytes).base64EncodedString())\""), ("uuid", "\"\(uuid.uuidString.lowercased())\""),
            ("strings", numbers(strings.map(SyncWire.string))),
            ("ints", numbers(ints.map(String.init))),
            ("int8s", numbers(int8s.map { String($0) })),
            ("uint64s", numbers(uint64s.map { "\"\($0)\"" })),
            ("doubles", numbers(doubles.map(SyncWire.double))),
            ("floats", numbers(floats.map { SyncWire.double(Double($0)) })),
            ("dates", numbers(dates.map { SyncWire.double($0.timeIntervalSinceReferenceDate) })),
            ("bools", numbers(bools.map { "\($0)" })),
            ("uuids", SyncWire.uuids(uuids)),
            ("document", document),
            ("counts", "{" + counts.sorted { $0.key < $1.key }.map { "\(SyncWire.literal($0.key)): \($0.value)" }.joined(separator: ", ") + "}"),
            ("optionalText", optionalText.map(SyncWire.string) ?? "null"),
            ("home", home == nil ? "false" : "true"),
        ]
        if let home {
            fields += [("home.city", SyncWire.string(home.city)), ("home.zip", home.zip.map(SyncWire.string) ?? "null")]
        } else {
            fields += [("home.city", "null"), ("home.zip", "null")]
        }
        return fields
    }
}
