import Foundation

/// Tokenizing: a tokenizer is declared with the schema, and the full-text layer turns text
/// into terms with it.
extension TextTokenizer {
    /// The terms of `text` in order, for the index and for search terms.
    ///
    /// ```swift
    /// TextTokenizer.porter.terms(in: "Reading books")   // ["read", "book"]
    /// ```
    public func terms(in text: String) -> [String] {
        var terms: [String] = []
        Self.forEachWord(in: text) { word in
            let term = self.term(ofWord: word)
            if !term.isEmpty { terms.append(term) }
        }
        return terms
    }

    /// The term of a word from `forEachWord`: the word itself, or its stem (`.porter`). It
    /// can be empty (a word that folds to nothing), and is then not a term.
    func term(ofWord word: String) -> String {
        self == .porter ? PorterStemmer.stem(word) : word
    }

    /// Calls `body` with each word of `text`, case- and diacritic-folded and cut to
    /// `maximumTermBytes`: steps 1 and 2 of the tokenizing rules.
    static func forEachWord(in text: String, _ body: (String) throws -> Void) rethrows {
        var text = text
        let ascii = text.withUTF8 { isASCII($0) }
        if ascii {
            try text.withUTF8 { bytes in
                try forEachASCIIWord(in: bytes) { word in try body(String(decoding: word, as: UTF8.self)) }
            }
            return
        }
        var word = ""
        func flush() throws {
            guard !word.isEmpty else { return }
            var folded = fold(word)
            if folded.utf8.count > maximumTermBytes {
                var cut = ""
                for character in folded where cut.utf8.count + character.utf8.count <= maximumTermBytes { cut.append(character) }
                folded = cut
            }
            word = ""
            try body(folded)
        }
        for character in text {
            if character.isLetter || character.isNumber {
                word.append(character)
            } else {
                try flush()
            }
        }
        try flush()
    }

    /// Whether every byte is ASCII, eight bytes at a time.
    static func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        let raw = UnsafeRawPointer(base)
        var offset = 0
        while offset + 8 <= bytes.count {
            if raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self) & 0x8080_8080_8080_8080 != 0 { return false }
            offset += 8
        }
        while offset < bytes.count {
            if bytes[offset] >= 0x80 { return false }
            offset += 1
        }
        return true
    }

    /// `forEachWord` for ASCII text, byte by byte (the same result: ASCII letters and digits
    /// are exactly the ASCII characters that are letters or numbers). Each word is passed as
    /// folded bytes, valid only during the call.
    static func forEachASCIIWord(in text: UnsafeBufferPointer<UInt8>, _ body: (UnsafeBufferPointer<UInt8>) throws -> Void) rethrows {
        try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: maximumTermBytes) { word in
            var length = 0
            var inWord = false
            func flush() throws {
                guard inWord else { return }
                inWord = false
                try body(UnsafeBufferPointer(rebasing: word[0..<length]))
                length = 0
            }
            for byte in text {
                let folded: UInt8
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"): folded = byte
                case UInt8(ascii: "A")...UInt8(ascii: "Z"): folded = byte + 32
                default:
                    try flush()
                    continue
                }
                inWord = true
                // Longer words are cut: the rest of the word is skipped.
                if length < maximumTermBytes {
                    word[length] = folded
                    length += 1
                }
            }
            try flush()
        }
    }

    /// The longest term kept, in UTF-8 bytes (index keys are at most 511 bytes).
    static let maximumTermBytes = 200

    /// Case and diacritic folding; ASCII takes a fast path.
    static func fold(_ word: String) -> String {
        if word.utf8.allSatisfy({ $0 < 0x80 }) { return word.lowercased() }
        let folded = word.folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil)
        // Folding can leave characters that are not letters or digits (ligature parts):
        // keep only letters and digits, so a term never holds a separator.
        return String(folded.lowercased().filter { $0.isLetter || $0.isNumber })
    }
}
