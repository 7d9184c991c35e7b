/// A group of property types whose index keys share one encoding: an index survives a change
/// of its property's type within a family (an `Int32` widened to `Int64` keeps its keys), and
/// a query value of any type in the family encodes to a key the index can compare with.
///
/// ```swift
/// PropertyType.int32.indexKeyFamily == PropertyType.int64.indexKeyFamily   // true: .signedInteger
/// PropertyType.date.indexKeyFamily                                         // .floatingPoint
/// ```
enum IndexKeyFamily: Hashable, Sendable {
    /// `Int8` ... `Int64` and `Int`: the value widened to 64 bits, sign bit flipped.
    case signedInteger
    /// `UInt8` ... `UInt64` and `UInt`: the value widened to 64 bits.
    case unsignedInteger
    /// `Float`, `Double` and `Date`: the value as a `Double`, bits ordered.
    case floatingPoint
    /// `Bool`.
    case bool
    /// `String`: canonical, escaped and possibly cut bytes (see ``IndexKey``).
    case string
    /// `UUID`: its 16 bytes.
    case uuid
    /// Any other type, whose keys share their encoding with no other type.
    case other(PropertyType)
}

extension PropertyType {
    /// The family of types whose index keys are encoded as this type's are.
    var indexKeyFamily: IndexKeyFamily {
        switch self {
        case .int8, .int16, .int32, .int64, .int: return .signedInteger
        case .uint8, .uint16, .uint32, .uint64, .uint: return .unsignedInteger
        case .float, .double, .date: return .floatingPoint
        case .bool: return .bool
        case .string: return .string
        case .uuid: return .uuid
        default: return .other(self)
        }
    }
}
