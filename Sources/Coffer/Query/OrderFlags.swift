/// How `ordered(by:flags:)` sorts by a property.
///
/// Default: ascending; strings case-insensitively (Unicode case folding); nil before every
/// value. Ties are broken by the next order, and finally by ascending id.
///
/// ```swift
/// .ordered(by: Person.lastName, flags: [.descending, .caseSensitive])
/// ```
public struct OrderFlags: OptionSet, Sendable, Hashable {
    /// The raw bits.
    ///
    /// ```swift
    /// OrderFlags(rawValue: 1)
    /// ```
    public let rawValue: UInt8
    /// Creates flags from raw bits.
    ///
    /// ```swift
    /// OrderFlags(rawValue: 3)
    /// ```
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Largest first (nil placement is not reversed).
    ///
    /// ```swift
    /// [.descending]
    /// ```
    public static let descending = OrderFlags(rawValue: 1 << 0)
    /// Strings by UTF-8 bytes, so `"B"` sorts before `"a"`.
    ///
    /// ```swift
    /// [.caseSensitive]
    /// ```
    public static let caseSensitive = OrderFlags(rawValue: 1 << 1)
    /// Signed integers as their unsigned bit patterns (-1 sorts last).
    ///
    /// ```swift
    /// [.unsigned]
    /// ```
    public static let unsigned = OrderFlags(rawValue: 1 << 2)
    /// nil after every value instead of before.
    ///
    /// ```swift
    /// [.nullsLast]
    /// ```
    public static let nullsLast = OrderFlags(rawValue: 1 << 3)
    /// nil sorts as zero (0, "", false).
    ///
    /// ```swift
    /// [.nullsZero]
    /// ```
    public static let nullsZero = OrderFlags(rawValue: 1 << 4)
}

/// One `ordered(by:flags:)` step.
struct QueryOrder: Sendable {
    let position: Int
    let flags: OrderFlags
}
