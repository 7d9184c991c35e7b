/// A compiled regular expression for `$regex`, with its source for `describe()`.
///
/// Swift's `Regex` syntax (a superset of the PCRE subset Cloudant documents); the match may
/// start anywhere in the string.
///
/// A class, not a struct: `Regex` is a resilient type of unknown size, and a struct holding
/// one made every `ConditionOp` and `ConditionLeaf` copy go through the runtime's generic
/// value witnesses (a few hundred instructions per copy, several copies per query run).
final class RegexPattern: @unchecked Sendable {
    // `Regex` is an immutable value once built; it is only read, from any thread.
    let source: String
    private let regex: Regex<AnyRegexOutput>

    init(_ source: String) throws {
        self.source = source
        regex = try Regex(source)
    }

    func matches(_ text: String) -> Bool {
        text.contains(regex)
    }
}
