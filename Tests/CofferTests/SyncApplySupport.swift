@_spi(CofferSync) @testable import Coffer
import Foundation

/// Builds pulled pages in the server's wire format (`coffer_pull`) for the apply tests.
struct PageBuilder {
    static let stream = "postgres://test:5432/db#coffer"
    static let sqlOrigin: UUID? = nil

    private(set) var changes: [String] = []

    /// An upsert of `syncId` with `fields` (wire JSON text by stored name), every field at
    /// `clock` from `origin` unless `clocks` names another.
    mutating func upsert(_ syncId: UUID, clock: UInt64, origin: UUID?, fields: [(String, String)],
                         clocks: [String: (UInt64, UUID?)] = [:]) {
        let fieldText = fields.map { "\"\($0.0)\": \($0.1)" }.joined(separator: ", ")
        let clockText = fields.map { name, _ in
            let (fieldClock, fieldOrigin) = clocks[name] ?? (clock, origin)
            return "\"\(name)\": [\(fieldClock), \(Self.origin(fieldOrigin))]"
        }.joined(separator: ", ")
        changes.append("""
            {"op": "upsert", "id": "\(syncId.uuidString.lowercased())", "txid": "\(changes.count + 1)", "hlc": "\(clock)", \
            "origin": \(Self.origin(origin)), "clocks": {\(clockText)}, "fields": {\(fieldText)}}
            """)
    }

    mutating func delete(_ syncId: UUID, clock: UInt64, origin: UUID?) {
        changes.append("""
            {"op": "delete", "id": "\(syncId.uuidString.lowercased())", "txid": "\(changes.count + 1)", "hlc": "\(clock)", "origin": \(Self.origin(origin))}
            """)
    }

    func page(cursor: String = "100", more: Bool = false) -> Data {
        Data("{\"changes\": [\(changes.joined(separator: ", "))], \"cursor\": \"\(cursor)\", \"more\": \(more)}".utf8)
    }

    static func origin(_ origin: UUID?) -> String {
        origin.map { "\"\($0.uuidString.lowercased())\"" } ?? "null"
    }

    /// A JSON string literal.
    static func string(_ text: String) -> String { FieldDescription.quoted(text) }
}

/// Registers entity types in a store (a write resolves their bindings), so that pages of
/// them can be applied before the first local write.
func register<each E: Entity>(_ types: repeat (each E).Type, in store: Store) throws {
    try store.performWrite { transaction in
        for type in repeat each types { _ = try store.writableBinding(for: type, in: transaction) }
    }
}

/// Every field of a stored record by stored id, as bytes (kind and payload).
func storedFields<E: Entity>(_ type: E.Type, id: Id, in store: Store) throws -> [UInt16: [UInt8]] {
    try store.performWrite { transaction in
        let binding = try store.writableBinding(for: type, in: transaction)
        guard let bytes = try transaction.record(id, table: binding.table, entity: binding.schema.name) else { return [:] }
        var fields: [UInt16: [UInt8]] = [:]
        try RecordFields(bytes: bytes, layout: binding, id: id).forEach { fieldId, field in
            fields[fieldId] = [field.kind.rawValue] + Array(field.payload)
        }
        return fields
    }
}
