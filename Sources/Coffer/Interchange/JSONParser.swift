/// A strict JSON parser (RFC 8259) with a nesting limit. It never traps: every malformed
/// input is an error naming the byte offset and what was expected.
struct JSONParser {
    /// Deeper documents are refused (the limit keeps the recursion's stack bounded whatever
    /// the input). Room for an exported line of any storable document: the line's object, a
    /// document of `DocumentCodec.maximumDepth` levels with each object wrapped in
    /// `{"$object": ...}` (a look-alike of a tag) and a leaf tagged `{"$number": ...}`.
    static let maximumDepth = 2 * DocumentCodec.maximumDepth + 8

    struct Failure: Error, CustomStringConvertible {
        let offset: Int
        let reason: String
        var description: String { "\(reason) at byte \(offset)" }
    }

    private let bytes: [UInt8]
    private var offset = 0

    private init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// The document in `bytes`: one value, surrounded by nothing but whitespace.
    static func parse(_ bytes: [UInt8]) throws(Failure) -> JSONNode {
        var parser = JSONParser(bytes)
        let value = try parser.value(depth: 0)
        parser.skipWhitespace()
        guard parser.offset == bytes.count else { throw parser.failure("unexpected text after the JSON value") }
        return value
    }

    private func failure(_ reason: String) -> Failure {
        Failure(offset: offset, reason: reason)
    }

    private mutating func skipWhitespace() {
        while offset < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[offset]) { offset += 1 }
    }

    private mutating func value(depth: Int) throws(Failure) -> JSONNode {
        guard depth < Self.maximumDepth else { throw failure("the JSON is nested more than \(Self.maximumDepth) levels deep") }
        skipWhitespace()
        guard offset < bytes.count else { throw failure("a JSON value is missing") }
        switch bytes[offset] {
        case UInt8(ascii: "{"): return try object(depth: depth)
        case UInt8(ascii: "["): return try array(depth: depth)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try number())
        default: throw failure("unexpected character '\(Self.printable(bytes[offset]))'")
        }
    }

    private mutating func literal(_ word: String) throws(Failure) {
        let expected = Array(word.utf8)
        guard bytes.count - offset >= expected.count, bytes[offset..<(offset + expected.count)].elementsEqual(expected) else {
            throw failure("expected \(word)")
        }
        offset += expected.count
    }

    private mutating func object(depth: Int) throws(Failure) -> JSONNode {
        offset += 1   // {
        var members: [JSONMember] = []
        skipWhitespace()
        if offset < bytes.count, bytes[offset] == UInt8(ascii: "}") {
            offset += 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard offset < bytes.count, bytes[offset] == UInt8(ascii: "\"") else { throw failure("expected a member name in quotes") }
            let key = try string()
            skipWhitespace()
            guard offset < bytes.count, bytes[offset] == UInt8(ascii: ":") else { throw failure("expected ':' after \(FieldDescription.quoted(key))") }
            offset += 1
            members.append(JSONMember(key: key, value: try value(depth: depth + 1)))
            skipWhitespace()
            guard offset < bytes.count else { throw failure("the object is not closed") }
            if bytes[offset] == UInt8(ascii: ",") {
                offset += 1
                continue
            }
            guard bytes[offset] == UInt8(ascii: "}") else { throw failure("expected ',' or '}' in an object") }
            offset += 1
            return .object(members)
        }
    }

    private mutating func array(depth: Int) throws(Failure) -> JSONNode {
        offset += 1   // [
        var elements: [JSONNode] = []
        skipWhitespace()
        if offset < bytes.count, bytes[offset] == UInt8(ascii: "]") {
            offset += 1
            return .array(elements)
        }
        while true {
            elements.append(try value(depth: depth + 1))
            skipWhitespace()
            guard offset < bytes.count else { throw failure("the array is not closed") }
            if bytes[offset] == UInt8(ascii: ",") {
                offset += 1
                continue
            }
            guard bytes[offset] == UInt8(ascii: "]") else { throw failure("expected ',' or ']' in an array") }
            offset += 1
            return .array(elements)
        }
    }

    private mutating func number() throws(Failure) -> JSONNumber {
        let start = offset
        func digits() -> Int {
            let first = offset
            while offset < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[offset]) { offset += 1 }
            return offset - first
        }
        if bytes[offset] == UInt8(ascii: "-") { offset += 1 }
        guard offset < bytes.count else { throw failure("a number has no digits") }
        if bytes[offset] == UInt8(ascii: "0") {
            offset += 1
        } else {
            guard digits() > 0 else { throw failure("a number has no digits") }
        }
        if offset < bytes.count, bytes[offset] == UInt8(ascii: ".") {
            offset += 1
            guard digits() > 0 else { throw failure("a number has no digits after its decimal point") }
        }
        if offset < bytes.count, bytes[offset] == UInt8(ascii: "e") || bytes[offset] == UInt8(ascii: "E") {
            offset += 1
            if offset < bytes.count, bytes[offset] == UInt8(ascii: "+") || bytes[offset] == UInt8(ascii: "-") { offset += 1 }
            guard digits() > 0 else { throw failure("a number has no digits in its exponent") }
        }
        let text = String(decoding: bytes[start..<offset], as: UTF8.self)
        guard let value = Double(text), value.isFinite else { throw Failure(offset: start, reason: "the number \(text) is out of range") }
        return JSONNumber(text: text)
    }

    private mutating func string() throws(Failure) -> String {
        offset += 1   // opening quote
        // Runs between escapes are validated and appended whole; a string without escapes
        // (the common case) is made from its bytes in one step.
        var result = ""
        var run = offset
        func flushRun() throws(Failure) {
            guard run < offset else { return }
            guard let text = String(validating: bytes[run..<offset], as: UTF8.self) else { throw failure("a string is not valid UTF-8") }
            if result.isEmpty { result = text } else { result.append(text) }
        }
        while true {
            guard offset < bytes.count else { throw failure("a string is not closed") }
            let byte = bytes[offset]
            switch byte {
            case UInt8(ascii: "\""):
                try flushRun()
                offset += 1
                return result
            case UInt8(ascii: "\\"):
                try flushRun()
                offset += 1
                guard offset < bytes.count else { throw failure("a string ends inside an escape") }
                let escape = bytes[offset]
                offset += 1
                switch escape {
                case UInt8(ascii: "\""): result.unicodeScalars.append("\"")
                case UInt8(ascii: "\\"): result.unicodeScalars.append("\\")
                case UInt8(ascii: "/"): result.unicodeScalars.append("/")
                case UInt8(ascii: "b"): result.unicodeScalars.append("\u{08}")
                case UInt8(ascii: "f"): result.unicodeScalars.append("\u{0C}")
                case UInt8(ascii: "n"): result.unicodeScalars.append("\n")
                case UInt8(ascii: "r"): result.unicodeScalars.append("\r")
                case UInt8(ascii: "t"): result.unicodeScalars.append("\t")
                case UInt8(ascii: "u"):
                    var code = try hex4()
                    if (0xD800..<0xDC00).contains(code) {
                        // A high surrogate must be followed by an escaped low one.
                        guard bytes.count - offset >= 6, bytes[offset] == UInt8(ascii: "\\"), bytes[offset + 1] == UInt8(ascii: "u") else {
                            throw failure("a \\u escape holds half of a surrogate pair")
                        }
                        offset += 2
                        let low = try hex4()
                        guard (0xDC00..<0xE000).contains(low) else { throw failure("a \\u escape holds half of a surrogate pair") }
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let scalar = Unicode.Scalar(code) else { throw failure("a \\u escape holds half of a surrogate pair") }
                    result.unicodeScalars.append(scalar)
                default:
                    throw failure("unknown escape '\\\(Self.printable(escape))'")
                }
                run = offset
            case 0..<0x20:
                throw failure("a string holds an unescaped control character")
            default:
                offset += 1
            }
        }
    }

    private mutating func hex4() throws(Failure) -> UInt32 {
        guard bytes.count - offset >= 4 else { throw failure("a \\u escape needs four hex digits") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[offset]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw failure("a \\u escape needs four hex digits")
            }
            value = value << 4 | digit
            offset += 1
        }
        return value
    }

    private static func printable(_ byte: UInt8) -> String {
        byte >= 0x20 && byte < 0x7F ? String(UnicodeScalar(byte)) : "\\u{\(String(byte, radix: 16))}"
    }
}
