/// The Porter stemming algorithm (M. F. Porter, "An algorithm for suffix stripping",
/// Program 14(3), 1980), as published: steps 1a, 1b, 1c, 2, 3, 4, 5a and 5b over lowercase
/// ASCII words. Words with other characters, and words of one or two letters, are returned
/// unchanged.
///
/// Terms used below: a consonant is a letter other than a, e, i, o, u, and other than y
/// preceded by a consonant; `m` is the number of vowel-consonant sequences in a stem
/// ([C](VC)^m[V]).
///
/// ```swift
/// PorterStemmer.stem("relational")   // "relat"
/// ```
enum PorterStemmer {
    static func stem(_ word: String) -> String {
        var bytes = Array(word.utf8)
        guard bytes.count > 2, bytes.allSatisfy({ $0 >= 0x61 && $0 <= 0x7A }) else { return word }
        step1a(&bytes)
        step1b(&bytes)
        step1c(&bytes)
        step2(&bytes)
        step3(&bytes)
        step4(&bytes)
        step5(&bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    // MARK: Measures

    private static func isConsonant(_ word: [UInt8], _ index: Int) -> Bool {
        switch word[index] {
        case UInt8(ascii: "a"), UInt8(ascii: "e"), UInt8(ascii: "i"), UInt8(ascii: "o"), UInt8(ascii: "u"): return false
        case UInt8(ascii: "y"): return index == 0 ? true : !isConsonant(word, index - 1)
        default: return true
        }
    }

    /// m of the first `length` letters.
    private static func measure(_ word: [UInt8], _ length: Int) -> Int {
        var index = 0
        while index < length, isConsonant(word, index) { index += 1 }
        var m = 0
        while index < length {
            while index < length, !isConsonant(word, index) { index += 1 }
            guard index < length else { break }
            m += 1
            while index < length, isConsonant(word, index) { index += 1 }
        }
        return m
    }

    private static func containsVowel(_ word: [UInt8], _ length: Int) -> Bool {
        (0..<length).contains { !isConsonant(word, $0) }
    }

    /// *d: ends with a double consonant.
    private static func endsWithDoubleConsonant(_ word: [UInt8], _ length: Int) -> Bool {
        length >= 2 && word[length - 1] == word[length - 2] && isConsonant(word, length - 1)
    }

    /// *o: ends consonant-vowel-consonant, the last not w, x or y.
    private static func endsCVC(_ word: [UInt8], _ length: Int) -> Bool {
        guard length >= 3, isConsonant(word, length - 1), !isConsonant(word, length - 2), isConsonant(word, length - 3) else { return false }
        let last = word[length - 1]
        return last != UInt8(ascii: "w") && last != UInt8(ascii: "x") && last != UInt8(ascii: "y")
    }

    // Suffixes are `StaticString`s: their bytes are read in place, with no copy (the
    // stemmer runs once per indexed word).
    private static func ends(_ word: [UInt8], _ suffix: StaticString) -> Bool {
        suffix.withUTF8Buffer { bytes in
            guard word.count >= bytes.count else { return false }
            let start = word.count - bytes.count
            for offset in 0..<bytes.count where word[start + offset] != bytes[offset] { return false }
            return true
        }
    }

    private static func replace(_ word: inout [UInt8], _ suffix: StaticString, with replacement: StaticString) {
        word.removeLast(suffix.utf8CodeUnitCount)
        replacement.withUTF8Buffer { word.append(contentsOf: $0) }
    }

    /// Replaces the first matching suffix whose stem has m > `minimum`; true when a listed
    /// suffix matched (whether or not it was replaced).
    @discardableResult
    private static func replaceFirst(_ word: inout [UInt8], _ rules: [(StaticString, StaticString)], minimum: Int) -> Bool {
        for (suffix, replacement) in rules where ends(word, suffix) {
            if measure(word, word.count - suffix.utf8CodeUnitCount) > minimum { replace(&word, suffix, with: replacement) }
            return true
        }
        return false
    }

    // MARK: Steps

    private static func step1a(_ word: inout [UInt8]) {
        if ends(word, "sses") { replace(&word, "sses", with: "ss") }
        else if ends(word, "ies") { replace(&word, "ies", with: "i") }
        else if ends(word, "ss") { return }
        else if ends(word, "s") { word.removeLast() }
    }

    private static func step1b(_ word: inout [UInt8]) {
        if ends(word, "eed") {
            if measure(word, word.count - 3) > 0 { word.removeLast() }
            return
        }
        if ends(word, "ed"), containsVowel(word, word.count - 2) {
            word.removeLast(2)
        } else if ends(word, "ing"), containsVowel(word, word.count - 3) {
            word.removeLast(3)
        } else {
            return
        }
        if ends(word, "at") || ends(word, "bl") || ends(word, "iz") {
            word.append(UInt8(ascii: "e"))
        } else if endsWithDoubleConsonant(word, word.count),
                  ![UInt8(ascii: "l"), UInt8(ascii: "s"), UInt8(ascii: "z")].contains(word[word.count - 1]) {
            word.removeLast()
        } else if measure(word, word.count) == 1, endsCVC(word, word.count) {
            word.append(UInt8(ascii: "e"))
        }
    }

    private static func step1c(_ word: inout [UInt8]) {
        if ends(word, "y"), containsVowel(word, word.count - 1) { word[word.count - 1] = UInt8(ascii: "i") }
    }

    private static let step2Rules: [(StaticString, StaticString)] = [
        ("ational", "ate"), ("tional", "tion"), ("enci", "ence"), ("anci", "ance"), ("izer", "ize"),
        ("abli", "able"), ("alli", "al"), ("entli", "ent"), ("eli", "e"), ("ousli", "ous"),
        ("ization", "ize"), ("ation", "ate"), ("ator", "ate"), ("alism", "al"), ("iveness", "ive"),
        ("fulness", "ful"), ("ousness", "ous"), ("aliti", "al"), ("iviti", "ive"), ("biliti", "ble"),
    ]

    private static func step2(_ word: inout [UInt8]) {
        replaceFirst(&word, step2Rules, minimum: 0)
    }

    private static let step3Rules: [(StaticString, StaticString)] = [
        ("icate", "ic"), ("ative", ""), ("alize", "al"), ("iciti", "ic"), ("ical", "ic"), ("ful", ""), ("ness", ""),
    ]

    private static func step3(_ word: inout [UInt8]) {
        replaceFirst(&word, step3Rules, minimum: 0)
    }

    private static let step4Suffixes: [StaticString] = [
        "al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent",
        "ion", "ou", "ism", "ate", "iti", "ous", "ive", "ize",
    ]

    private static func step4(_ word: inout [UInt8]) {
        // The longest matching suffix decides (ement before ment before ent).
        var longest: StaticString?
        for suffix in step4Suffixes where ends(word, suffix) && suffix.utf8CodeUnitCount > (longest?.utf8CodeUnitCount ?? 0) {
            longest = suffix
        }
        guard let suffix = longest else { return }
        let stem = word.count - suffix.utf8CodeUnitCount
        guard measure(word, stem) > 1 else { return }
        if suffix.utf8CodeUnitCount == 3, ends(word, "ion") {
            guard stem > 0, word[stem - 1] == UInt8(ascii: "s") || word[stem - 1] == UInt8(ascii: "t") else { return }
        }
        word.removeLast(suffix.utf8CodeUnitCount)
    }

    private static func step5(_ word: inout [UInt8]) {
        if ends(word, "e") {
            let m = measure(word, word.count - 1)
            if m > 1 || (m == 1 && !endsCVC(word, word.count - 1)) { word.removeLast() }
        }
        if measure(word, word.count) > 1, endsWithDoubleConsonant(word, word.count), word[word.count - 1] == UInt8(ascii: "l") {
            word.removeLast()
        }
    }
}
