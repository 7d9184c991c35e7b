import Foundation

extension Query {
    /// Only some properties of the matches, as tuples: the records' other fields are not
    /// decoded.
    ///
    /// ```swift
    /// let rows: [(Double, Date)] = try orders.query { Order.total > 100 }.build()
    ///     .select(Order.total, Order.date).find()
    /// ```
    public func select<each Value: ProjectableValue>(_ properties: repeat Property<E, each Value>) -> Projection<E, repeat each Value> {
        var positions: [Int] = []
        repeat positions.append((each properties).index)
        return Projection(query: self, positions: positions)
    }
}

/// Selected properties of a query's matches, in the query's order (see ``Query/select(_:)``).
///
/// ```swift
/// for (name, age) in try people.query().build().select(Person.firstName, Person.age).find() { ... }
/// ```
public struct Projection<E: Entity, each Value: ProjectableValue>: Sendable {
    let query: Query<E>
    let positions: [Int]

    /// One tuple per match.
    ///
    /// ```swift
    /// let rows = try query.select(Person.firstName, Person.age).find()   // [(String, Int)]
    /// ```
    public func find() throws -> [(repeat each Value)] {
        try rows(limit: nil)
    }

    /// The first match's tuple in the query's order, or nil.
    ///
    /// ```swift
    /// let oldest = try query.select(Person.firstName, Person.age).findFirst()
    /// ```
    public func findFirst() throws -> (repeat each Value)? {
        try rows(limit: 1).first
    }

    private func rows(limit: Int?) throws -> [(repeat each Value)] {
        var rows: [(repeat each Value)] = []
        try query.forEachMatch(offset: 0, limit: limit) { reader in rows.append(try row(from: reader)) }
        return rows
    }

    /// The selected values of the record `reader` reads.
    func row(from reader: RecordReader) throws -> (repeat each Value) {
        var next = 0
        func project<V: ProjectableValue>(_ type: V.Type) throws -> V {
            defer { next += 1 }
            return try reader.project(V.self, position: positions[next])
        }
        return (repeat try project((each Value).self))
    }
}

/// A value a projection can read from one field: the storable types and their optionals.
///
/// ```swift
/// query.select(Person.firstName, Person.birthday)   // String and Date?: ProjectableValue
/// ```
public protocol ProjectableValue: Sendable {
    /// Reads the value from a reader positioned on the field, or from nil when the record
    /// has no value for it.
    ///
    /// ```swift
    /// try Int.cofferProject(from: reader)
    /// ```
    @_spi(CofferGenerated)
    static func cofferProject(from reader: _RecordReader?) throws -> Self
}

/// A non-optional projected property without a stored value; `RecordReader.project`
/// turns it into ``CofferError/damagedRecord(entity:id:reason:)`` naming the record.
struct MissingProjectedValue: Error {}

extension ProjectableValue where Self: RecordValue {
    /// Non-optional values must be stored (else the record is damaged).
    ///
    /// ```swift
    /// try String.cofferProject(from: reader)
    /// ```
    @_spi(CofferGenerated)
    public static func cofferProject(from reader: _RecordReader?) throws -> Self {
        guard let reader else { throw MissingProjectedValue() }
        return try reader.value(Self.self)
    }
}

extension Optional: ProjectableValue where Wrapped: RecordValue {
    /// nil when the record has no value.
    ///
    /// ```swift
    /// try Date?.cofferProject(from: nil)   // nil
    /// ```
    @_spi(CofferGenerated)
    public static func cofferProject(from reader: _RecordReader?) throws -> Wrapped? {
        guard let reader else { return nil }
        return try reader.value(Wrapped.self)
    }
}

extension Bool: ProjectableValue {}
extension Int: ProjectableValue {}
extension Int8: ProjectableValue {}
extension Int16: ProjectableValue {}
extension Int32: ProjectableValue {}
extension Int64: ProjectableValue {}
extension UInt: ProjectableValue {}
extension UInt8: ProjectableValue {}
extension UInt16: ProjectableValue {}
extension UInt32: ProjectableValue {}
extension UInt64: ProjectableValue {}
extension Float: ProjectableValue {}
extension Double: ProjectableValue {}
extension String: ProjectableValue {}
extension Date: ProjectableValue {}
extension Data: ProjectableValue {}
extension UUID: ProjectableValue {}
extension Array: ProjectableValue where Element: RecordArrayElement {}

extension RecordReader {
    /// Reads one property of this reader's record for a projection.
    func project<V: ProjectableValue>(_ type: V.Type, position: Int) throws -> V {
        let binding = self.binding
        if binding.schema.properties[position].flags.contains(.id) {
            guard let id = id as? V else { throw mismatch(String(describing: V.self)) }
            return id
        }
        let record = UnsafeRawBufferPointer(start: base, count: end)
        guard let field = try RecordFields(bytes: record, entity: binding.schema.name, id: id).field(binding.storedIds[position]) else {
            do {
                return try V.cofferProject(from: nil)
            } catch {
                throw corrupt("no stored value for the selected property \(binding.schema.properties[position].name)")
            }
        }
        return try V.cofferProject(from: RecordReader(field: field, position: position, layout: binding, id: id))
    }
}
