import Foundation

/// Decodes a `Decodable` struct from one result row: each property from the column of its
/// name. Values convert only when exact (an integer column into `Int8` when it fits, a real
/// into `Int` when whole); anything else is a `DecodingError` naming the column.
struct SQLRowDecoder: Decoder {
    let row: SQLRow
    var codingPath: [any CodingKey] = []
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(Keyed<Key>(row: row, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw DecodingError.typeMismatch([SQLValue].self, .init(codingPath: codingPath, debugDescription: "a row decodes into a struct of its columns"))
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        // A one-column row decodes into a single value.
        guard row.values.count == 1 else {
            throw DecodingError.typeMismatch(SQLValue.self, .init(codingPath: codingPath, debugDescription: "a row of \(row.values.count) columns decodes into a struct"))
        }
        return Value(value: row.values[0], codingPath: codingPath)
    }

    struct Keyed<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let row: SQLRow
        let codingPath: [any CodingKey]

        var allKeys: [Key] { row.columns.compactMap { Key(stringValue: $0) } }

        func contains(_ key: Key) -> Bool { row.columns.contains(key.stringValue) }

        private func value(_ key: Key) throws -> SQLValue {
            guard let value = row[key.stringValue] else {
                throw DecodingError.keyNotFound(key, .init(codingPath: codingPath, debugDescription: "the result has no column \(key.stringValue) (columns: \(row.columns.joined(separator: ", ")))"))
            }
            return value
        }

        func decodeNil(forKey key: Key) throws -> Bool {
            (row[key.stringValue] ?? .null).isNull
        }

        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            try Value(value: try value(key), codingPath: codingPath + [key]).decode(type)
        }

        func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
            throw DecodingError.typeMismatch(type, .init(codingPath: codingPath + [key], debugDescription: "a column holds one value, not a nested struct"))
        }

        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
            throw DecodingError.typeMismatch([SQLValue].self, .init(codingPath: codingPath + [key], debugDescription: "a column holds one value, not an array"))
        }

        func superDecoder() throws -> any Decoder { SQLRowDecoder(row: row, codingPath: codingPath) }
        func superDecoder(forKey key: Key) throws -> any Decoder { SQLRowDecoder(row: row, codingPath: codingPath + [key]) }
    }

    /// One column's value.
    struct Value: SingleValueDecodingContainer, Decoder {
        let value: SQLValue
        let codingPath: [any CodingKey]
        var userInfo: [CodingUserInfoKey: Any] { [:] }

        func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
            throw mismatch(type)
        }

        func unkeyedContainer() throws -> any UnkeyedDecodingContainer { throw mismatch([SQLValue].self) }
        func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

        private func mismatch(_ type: Any.Type) -> DecodingError {
            let name = codingPath.last?.stringValue ?? "the value"
            return DecodingError.typeMismatch(type, .init(codingPath: codingPath, debugDescription: "column \(name) holds \(value), which is not a \(type)"))
        }

        func decodeNil() -> Bool { value.isNull }

        func decode(_ type: Bool.Type) throws -> Bool {
            switch value {
            case .integer(0): return false
            case .integer(1): return true
            default: throw mismatch(type)
            }
        }

        func decode(_ type: String.Type) throws -> String {
            guard case .text(let text) = value else { throw mismatch(type) }
            return text
        }

        func decode(_ type: Double.Type) throws -> Double {
            switch value {
            case .real(let number): return number
            case .integer(let number): return Double(number)
            case .unsigned(let number): return Double(number)
            default: throw mismatch(type)
            }
        }

        func decode(_ type: Float.Type) throws -> Float {
            Float(try decode(Double.self))
        }

        private func integer<T: FixedWidthInteger>(_ type: T.Type) throws -> T {
            switch value {
            case .integer(let number): if let exact = T(exactly: number) { return exact }
            case .unsigned(let number): if let exact = T(exactly: number) { return exact }
            case .real(let number): if let exact = T(exactly: number) { return exact }
            default: break
            }
            throw mismatch(type)
        }

        func decode(_ type: Int.Type) throws -> Int { try integer(type) }
        func decode(_ type: Int8.Type) throws -> Int8 { try integer(type) }
        func decode(_ type: Int16.Type) throws -> Int16 { try integer(type) }
        func decode(_ type: Int32.Type) throws -> Int32 { try integer(type) }
        func decode(_ type: Int64.Type) throws -> Int64 { try integer(type) }
        func decode(_ type: UInt.Type) throws -> UInt { try integer(type) }
        func decode(_ type: UInt8.Type) throws -> UInt8 { try integer(type) }
        func decode(_ type: UInt16.Type) throws -> UInt16 { try integer(type) }
        func decode(_ type: UInt32.Type) throws -> UInt32 { try integer(type) }
        func decode(_ type: UInt64.Type) throws -> UInt64 { try integer(type) }

        func decode<T: Decodable>(_ type: T.Type) throws -> T {
            // Dates, UUIDs and bytes read their SQL form, not their Codable one.
            if type == Date.self {
                if let date = Date(timeIntervalSince1970: try decode(Double.self)) as? T { return date }
            } else if type == UUID.self {
                guard case .text(let text) = value, let uuid = UUID(uuidString: text) else { throw mismatch(type) }
                if let uuid = uuid as? T { return uuid }
            } else if type == Data.self {
                guard case .blob(let bytes) = value else { throw mismatch(type) }
                if let bytes = bytes as? T { return bytes }
            }
            return try T(from: self)
        }
    }
}
