import Foundation

/// Quoting for names that go into generated SQL.
enum SQLText {
    /// `name` as a quoted identifier: `Person` -> `"Person"`, `a"b` -> `"a""b"`.
    static func identifier(_ name: String) -> String {
        "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// `text` as a string literal: `it's` -> `'it''s'`.
    static func literal(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
    }
}
