import Foundation

/// Every error Coffer throws.
///
/// Each case carries the entity, property and value involved, and ``description`` turns
/// them into a sentence a developer can act on. Switch on the case to handle a specific
/// failure:
///
/// ```swift
/// do {
///     try people.put(&person)
/// } catch CofferError.uniqueViolation(let entity, let property, let value) {
///     print("\(entity).\(property) already holds \(value)")
/// }
/// ```
///
/// A thrown error never leaves a transaction half-applied: the write that failed is rolled
/// back and committed data stays as it was.
public enum CofferError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A put would give a `@Unique` property a value another object already holds.
    ///
    /// ```swift
    /// catch CofferError.uniqueViolation(let entity, let property, let value) { ... }
    /// ```
    case uniqueViolation(entity: String, property: String, value: String)

    /// `findUnique()` matched more than one object.
    ///
    /// ```swift
    /// catch CofferError.nonUniqueResult(let entity, let count) { ... }
    /// ```
    case nonUniqueResult(entity: String, count: Int)

    /// An object that must exist does not.
    ///
    /// ```swift
    /// catch CofferError.notFound(let entity, let id) { ... }
    /// ```
    case notFound(entity: String, id: Id)

    /// The declared type of a property cannot read what the store holds for it.
    ///
    /// ```swift
    /// catch CofferError.schemaMismatch(let entity, let property, let stored, let declared) { ... }
    /// ```
    case schemaMismatch(entity: String, property: String, stored: String, declared: String)

    /// A query parameter was set for a property or alias the query does not have.
    ///
    /// ```swift
    /// catch CofferError.parameterNotFound(let entity, let parameter) { ... }
    /// ```
    case parameterNotFound(entity: String, parameter: String)

    /// A query parameter was given a value of the wrong type or arity.
    ///
    /// ```swift
    /// catch CofferError.parameterTypeMismatch(let entity, let parameter, let expected, let actual) { ... }
    /// ```
    case parameterTypeMismatch(entity: String, parameter: String, expected: String, actual: String)

    /// A selector document could not be understood.
    ///
    /// ```swift
    /// catch CofferError.invalidSelector(let message) { ... }
    /// ```
    case invalidSelector(message: String)

    /// A full-text search (``Property/matches(_:)``) could not be parsed: an unbalanced
    /// quote or parenthesis, an empty search, an operator without operands, a search that is
    /// not bounded (only negations, or an alternative of only negations, as `cats OR -dogs`
    /// alone), NEAR beside a group, a `name:` prefix naming no searched full-text property.
    ///
    /// ```swift
    /// catch CofferError.invalidSearch(let search, let reason) { print("\(search): \(reason)") }
    /// ```
    case invalidSearch(search: String, reason: String)

    /// A line of an import (``Store/importObjects(entity:jsonLines:upsertBy:progress:)``,
    /// `coffer import`) was refused: it is not a JSON object, names a property the entity
    /// does not have, holds a value of the wrong type, leaves out a required property, or
    /// its write failed (a unique violation, an ambiguous upsert key). Nothing of the import
    /// is stored. `line` counts from 1.
    ///
    /// ```swift
    /// catch CofferError.invalidImport(let line, let message) { print("line \(line): \(message)") }
    /// ```
    case invalidImport(line: Int, message: String)

    /// An upsert by an external id found several stored objects with that key.
    ///
    /// ```swift
    /// catch CofferError.ambiguousUpsert(let entity, let property, let value, let count) { ... }
    /// ```
    case ambiguousUpsert(entity: String, property: String, value: String, count: Int)

    /// A put would store a document (a ``JSONValue``, or an array of embedded values) nested
    /// deeper than a record may hold: `depth` levels, its root being level 1, against
    /// `limit`. Nothing of the put is stored.
    ///
    /// ```swift
    /// catch CofferError.documentTooDeep(let entity, let property, let depth, let limit) { ... }
    /// ```
    case documentTooDeep(entity: String, property: String, depth: Int, limit: Int)

    /// A write was attempted on a store opened with `readOnly: true`.
    ///
    /// ```swift
    /// catch CofferError.readOnly(let path, let operation) { ... }
    /// ```
    case readOnly(path: String, operation: String)

    /// The store was used after ``Store/close()``.
    ///
    /// ```swift
    /// catch CofferError.storeClosed(let path) { ... }
    /// ```
    case storeClosed(path: String)

    /// A stored record could not be decoded: the file is damaged or was written by an
    /// incompatible program.
    ///
    /// ```swift
    /// catch CofferError.corruptRecord(let entity, let id, let reason) { ... }
    /// ```
    case corruptRecord(entity: String, id: Id, reason: String)

    /// An API was used in a way it cannot support, such as writing inside a read transaction.
    ///
    /// ```swift
    /// catch CofferError.invalidOperation(let message) { ... }
    /// ```
    case invalidOperation(message: String)

    /// The storage engine (LMDB) or the file system reported an error.
    ///
    /// ```swift
    /// catch CofferError.storage(let code, let message) { ... }
    /// ```
    case storage(code: Int32, message: String)

    /// A sentence naming what failed, with the entity, property and value involved.
    ///
    /// ```swift
    /// print(error.description)   // "Person.email: the value \"a@b.c\" is already used ..."
    /// ```
    public var description: String {
        switch self {
        case let .uniqueViolation(entity, property, value):
            return "\(entity).\(property): the value \(value) is already used by another \(entity); the property is @Unique"
        case let .nonUniqueResult(entity, count):
            return "\(entity): findUnique() matched \(count) objects; expected at most one"
        case let .notFound(entity, id):
            return "\(entity) with id \(id) does not exist"
        case let .schemaMismatch(entity, property, stored, declared):
            return "\(entity).\(property): the store holds \(stored) values, which the declared type \(declared) cannot read"
        case let .parameterNotFound(entity, parameter):
            return "\(entity): the query has no condition for parameter \(parameter)"
        case let .parameterTypeMismatch(entity, parameter, expected, actual):
            return "\(entity): parameter \(parameter) expects \(expected), got \(actual)"
        case let .invalidSelector(message):
            return "invalid selector: \(message)"
        case let .invalidSearch(search, reason):
            return "invalid full-text search \(FieldDescription.quoted(search)): \(reason)"
        case let .invalidImport(line, message):
            return "import line \(line): \(message); nothing was imported"
        case let .ambiguousUpsert(entity, property, value, count):
            return "\(entity).\(property): \(count) stored objects have the value \(value); upsert needs at most one"
        case let .documentTooDeep(entity, property, depth, limit):
            return "\(entity).\(property): the document nests \(depth) levels; a record holds documents of at most \(limit) levels"
        case let .readOnly(path, operation):
            return "store at \(path) is read-only; cannot \(operation)"
        case let .storeClosed(path):
            return "store at \(path) is closed"
        case let .corruptRecord(entity, id, reason):
            return "\(entity) with id \(id) cannot be decoded: \(reason)"
        case let .invalidOperation(message):
            return message
        case let .storage(code, message):
            return "storage error \(code): \(message)"
        }
    }
}

extension CofferError: LocalizedError {
    /// The same text as ``description``, for APIs that show `localizedDescription`.
    ///
    /// ```swift
    /// print(error.localizedDescription)
    /// ```
    public var errorDescription: String? { description }
}
