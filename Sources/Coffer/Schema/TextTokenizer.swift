import Foundation

/// How a `@FullText` property's text becomes index terms.
///
/// ```swift
/// @FullText(.porter) var body: String    // "Reading books" -> ["read", "book"]
/// @FullText(.simple) var title: String   // "Café Crème"    -> ["cafe", "creme"]
/// ```
///
/// Both tokenizers are deterministic:
/// 1. The text is split into words: maximal runs of characters that are letters or digits in
///    any script (Unicode `isLetter`/`isNumber`, with their combining marks). Everything
///    else separates words: spaces, punctuation, symbols, apostrophes ("don't" is "don" and
///    "t").
/// 2. Each word is case-folded and diacritic-folded ("Café" and "CAFE" are "cafe"; "Straße"
///    is "strasse").
/// 3. `.porter` then applies the Porter stemming algorithm to words of ASCII letters
///    ("books" -> "book", "reading" -> "read", "relational" -> "relat"); other words stay
///    as folded.
/// Words longer than 200 UTF-8 bytes are cut to 200 (at a character boundary).
public enum TextTokenizer: String, Sendable, Hashable, CaseIterable {
    /// Unicode words, case- and diacritic-folded.
    ///
    /// ```swift
    /// @FullText(.simple) var title: String
    /// ```
    case simple
    /// `.simple`, then English stemming with the Porter algorithm.
    ///
    /// ```swift
    /// @FullText(.porter) var body: String
    /// ```
    case porter
}
