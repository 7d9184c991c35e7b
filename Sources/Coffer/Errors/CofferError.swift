import Foundation

/// Every error Coffer throws.
///
/// Each case says what went wrong and carries the entity, property and value involved;
/// ``description`` turns them into a sentence a developer can act on. Switch on the case
/// to handle a specific failure; no case needs its message parsed:
///
/// ```swift
/// do {
///     try people.put(&person)
/// } catch CofferError.uniqueViolation(let entity, let property, let value) {
///     print("\(entity).\(property) already holds \(value)")
/// } catch CofferError.storage(.lmdb(.mapFull), _) {
///     print("the store is full")
/// } catch CofferError.damagedRecord(let entity, let id, _) {
///     print("\(entity) \(id) is damaged; remove or overwrite it")
/// }
/// ```
///
/// The cases fall into groups: constraint violations (`uniqueViolation`, `ambiguousUpsert`,
/// `nonUniqueResult`, `notFound`, `documentTooDeep`, `limitReached`), schema problems
/// (`schemaMismatch`, `unknownEntity`, `formatTooNew`), invalid input (`invalidQuery`,
/// `invalidPaging`, `parameterNotFound`, `parameterTypeMismatch`, `invalidUpsertKey`,
/// `invalidSelector`, `invalidSQL`, `invalidSearch`, `invalidImport`, `importFailed`,
/// `invalidStoredValue`), misuse of the API (`misuse`), the store's state (`readOnly`,
/// `storeClosed`, `createdByOtherProcess`), damage (`damagedStore`, `damagedRecord`) and
/// storage failures with a typed LMDB or system code (`storage`).
///
/// A thrown error never leaves a transaction half-applied: the write that failed is rolled
/// back and committed data stays as it was.
public enum CofferError: Error, Sendable, Equatable, CustomStringConvertible {
    // MARK: Constraint violations

    /// A put would give a `@Unique` property a value another object already holds.
    ///
    /// ```swift
    /// catch CofferError.uniqueViolation(let entity, let property, let value) { ... }
    /// ```
    case uniqueViolation(entity: String, property: String, value: String)

    /// An upsert by an external id found several stored objects with that key.
    ///
    /// ```swift
    /// catch CofferError.ambiguousUpsert(let entity, let property, let value, let count) { ... }
    /// ```
    case ambiguousUpsert(entity: String, property: String, value: String, count: Int)

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

    /// A put would store a document (a ``JSONValue``, or an array of embedded values) nested
    /// deeper than a record may hold: `depth` levels, its root being level 1, against
    /// `limit`. Nothing of the put is stored.
    ///
    /// ```swift
    /// catch CofferError.documentTooDeep(let entity, let property, let depth, let limit) { ... }
    /// ```
    case documentTooDeep(entity: String, property: String, depth: Int, limit: Int)

    /// An operation would pass a fixed limit: an entity's ids, its property ids, or the
    /// range of a sum.
    ///
    /// ```swift
    /// catch CofferError.limitReached(.sum(let entity, let property)) { useAverageInstead(entity, property) }
    /// ```
    case limitReached(Limit)

    // MARK: Schema

    /// The declared type of a property cannot read what the store holds for it, or an
    /// annotation does not fit the property's type.
    ///
    /// ```swift
    /// catch CofferError.schemaMismatch(let entity, let property, let stored, let declared) { ... }
    /// ```
    case schemaMismatch(entity: String, property: String, stored: String, declared: String)

    /// An operation by entity name (`dump`, `query(entity:selector:)`, `importObjects`,
    /// `copySchema`) named an entity the store at `path` does not have; `known` lists the
    /// ones it has.
    ///
    /// ```swift
    /// catch CofferError.unknownEntity(let name, _, let known) { print("\(name)? try \(known)") }
    /// ```
    case unknownEntity(name: String, path: String, known: [String])

    /// The store's catalog has format `version`, newer than the `supported` one this
    /// build of Coffer reads: it was written by a newer Coffer.
    ///
    /// ```swift
    /// catch CofferError.formatTooNew(let path, let version, _) { print("\(path) needs a newer app (format \(version))") }
    /// ```
    case formatTooNew(path: String, version: Int, supported: Int)

    // MARK: Invalid input

    /// A query cannot run as written: a condition whose operand does not fit its operator
    /// (`modulo(0)`, `matches` on a property without `@FullText`, an alias on a
    /// combination), an alias used twice, `findRanked()` without a full-text condition.
    /// `property` names the property of the condition at fault, when there is one.
    ///
    /// ```swift
    /// catch CofferError.invalidQuery(let entity, let property, let reason) { ... }
    /// ```
    case invalidQuery(entity: String, property: String?, reason: String)

    /// A negative offset or limit was given to `find`, `findRanked` or `results`.
    ///
    /// ```swift
    /// catch CofferError.invalidPaging(let entity, let offset, let limit) { ... }
    /// ```
    case invalidPaging(entity: String, offset: Int, limit: Int?)

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

    /// An upsert (``Box/upsert(_:by:)-(E,_)``, an import's `upsertBy`) by a property that
    /// cannot be its key: see ``UpsertKeyProblem``.
    ///
    /// ```swift
    /// catch CofferError.invalidUpsertKey(let entity, let property, .notIndexed) { ... }
    /// ```
    case invalidUpsertKey(entity: String, property: String, problem: UpsertKeyProblem)

    /// A selector document (or its sort, paging or fields) could not be understood:
    /// `reason` at `path` (the dotted field path; empty at the top) of a selector on `entity`.
    ///
    /// ```swift
    /// catch CofferError.invalidSelector(let entity, let path, let reason) { ... }
    /// ```
    case invalidSelector(entity: String, path: String, reason: String)

    /// A Smart SQL statement (``Store/query(sql:parameters:)-(_,[SQLValue])``, `coffer sql`)
    /// could not be run: a syntax error, an unknown entity, column or function, a type error
    /// (`'a' + 1`), a misplaced aggregate, a missing parameter. `position` is the 1-based
    /// character position in the statement and `near` the text found there.
    ///
    /// ```swift
    /// catch CofferError.invalidSQL(let position, let near, let reason) {
    ///     print("at \(position) near \(near): \(reason)")
    /// }
    /// ```
    case invalidSQL(position: Int, near: String, reason: String)

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
    /// does not have, holds a value of the wrong type, or leaves out a required property.
    /// Nothing of the import is stored. `line` counts from 1.
    ///
    /// ```swift
    /// catch CofferError.invalidImport(let entity, let line, let reason) { print("\(entity) line \(line): \(reason)") }
    /// ```
    case invalidImport(entity: String, line: Int, reason: String)

    /// The write of an import line failed with `cause` (a unique violation, an ambiguous
    /// upsert key, a document too deep). Nothing of the import is stored. `line` counts from 1.
    ///
    /// ```swift
    /// catch CofferError.importFailed(_, let line, .uniqueViolation(_, let property, let value)) { ... }
    /// ```
    indirect case importFailed(entity: String, line: Int, cause: CofferError)

    /// A page of changes pulled from a sync server (`applyPulledPage`) was refused: it is not
    /// the page format, or a change in it holds a value `field` cannot take (the wrong type,
    /// out of range, a link that is no sync id). `field` is the stored property name, nil
    /// when the page's structure is at fault; `reason` names the object and the value.
    /// Nothing of the page is applied and its cursor is not stored.
    ///
    /// ```swift
    /// catch CofferError.invalidSyncPage(let entity, let field, let reason) {
    ///     log("pull of \(entity) stopped at \(field ?? "the page"): \(reason)")
    /// }
    /// ```
    case invalidSyncPage(entity: String, field: String?, reason: String)

    /// A `PropertyConvertible` type (`URL`, `Decimal`) refused a stored value. Reading a
    /// record reports it as ``damagedRecord(entity:id:reason:)``; calling
    /// `init(storedValue:)` directly throws this.
    ///
    /// ```swift
    /// catch CofferError.invalidStoredValue(let type, let value) { print("\(value) is no \(type)") }
    /// ```
    case invalidStoredValue(type: String, value: String)

    // MARK: Misuse

    /// An API was called where or how it cannot work; ``Misuse`` says which and why.
    ///
    /// ```swift
    /// catch CofferError.misuse(.writeInsideRead) { ... }
    /// ```
    case misuse(Misuse)

    // MARK: The store's state

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

    /// `what` (an entity's table, a relation's tables) was created in the store at `path`
    /// by another process after this read opened its tables. A top-level read runs again by
    /// itself; a read nested in another one throws this: read again after it returns.
    ///
    /// ```swift
    /// catch CofferError.createdByOtherProcess(_, _) { try retryRead() }
    /// ```
    case createdByOtherProcess(what: String, path: String)

    // MARK: Damage

    /// Structure of the store that belongs to no single record is damaged: the data file,
    /// the schema catalog, a table's keys, an index or a relation (see ``StorePart``).
    ///
    /// ```swift
    /// catch CofferError.damagedStore(let part, let reason) { print("\(part): \(reason)") }
    /// ```
    case damagedStore(part: StorePart, reason: String)

    /// The record of `entity` with id `id` could not be decoded: the file is damaged or was
    /// written by an incompatible program. Overwriting or removing the object repairs it.
    ///
    /// ```swift
    /// catch CofferError.damagedRecord(let entity, let id, let reason) { ... }
    /// ```
    case damagedRecord(entity: String, id: Id, reason: String)

    // MARK: Storage

    /// The storage engine (LMDB) or the operating system reported an error: `code` says
    /// which (``StorageCode``), `message` what was being done.
    ///
    /// ```swift
    /// catch CofferError.storage(.lmdb(.readersFull), _) { ... }
    /// catch CofferError.storage(.system(.noSpace), let message) { ... }
    /// ```
    case storage(code: StorageCode, message: String)

    /// A sentence naming what failed, with the entity, property and value involved.
    ///
    /// ```swift
    /// print(error.description)   // "Person.email: the value \"a@b.c\" is already used ..."
    /// ```
    public var description: String {
        switch self {
        case let .uniqueViolation(entity, property, value):
            return "\(entity).\(property): the value \(value) is already used by another \(entity); the property is @Unique"
        case let .ambiguousUpsert(entity, property, value, count):
            return "\(entity).\(property): \(count) stored objects have the value \(value); upsert needs at most one"
        case let .nonUniqueResult(entity, count):
            return "\(entity): findUnique() matched \(count) objects; expected at most one"
        case let .notFound(entity, id):
            return "\(entity) with id \(id) does not exist"
        case let .documentTooDeep(entity, property, depth, limit):
            return "\(entity).\(property): the document nests \(depth) levels; a record holds documents of at most \(limit) levels"
        case .limitReached(.ids(let entity)):
            return "\(entity) has used up its ids"
        case .limitReached(.propertyIds(let entity)):
            return "\(entity) has used up its 65,534 property ids"
        case let .limitReached(.sum(entity, property)):
            return "the sum of \(entity).\(property) does not fit an Int"
        case let .schemaMismatch(entity, property, stored, declared):
            return "\(entity).\(property): the store holds \(stored) values, which the declared type \(declared) cannot read"
        case let .unknownEntity(name, path, known):
            return "the store at \(path) has no entity named \(name); it has: \(known.isEmpty ? "none" : known.joined(separator: ", "))"
        case let .formatTooNew(path, version, supported):
            return "the store at \(path) has format version \(version); this Coffer reads up to \(supported)"
        case let .invalidQuery(entity, property, reason):
            return "\(entity) query: " + (property.map { "\(entity).\($0): " } ?? "") + reason
        case let .invalidPaging(entity, offset, limit):
            return "\(entity) query: offset and limit must not be negative (got \(offset), \(limit ?? 0))"
        case let .parameterNotFound(entity, parameter):
            return "\(entity): the query has no condition for parameter \(parameter)"
        case let .parameterTypeMismatch(entity, parameter, expected, actual):
            return "\(entity): parameter \(parameter) expects \(expected), got \(actual)"
        case let .invalidUpsertKey(entity, property, .notIndexed):
            return "\(entity).\(property) is not indexed; upsert needs an @Index or @Unique property as its key"
        case let .invalidUpsertKey(entity, property, .missingValue):
            return "\(entity).\(property) is nil; upsert needs a key value"
        case let .invalidUpsertKey(entity, property, .array):
            return "\(entity).\(property) is an array: its index finds elements, not whole values (no @Unique or upsert key)"
        case let .invalidSelector(entity, path, reason):
            return "invalid selector: \(entity) selector" + (path.isEmpty ? "" : " at \(path)") + ": " + reason
        case let .invalidSQL(position, near, reason):
            return "invalid SQL at position \(position) near \(FieldDescription.quoted(near)): \(reason)"
        case let .invalidSearch(search, reason):
            return "invalid full-text search \(FieldDescription.quoted(search)): \(reason)"
        case let .invalidImport(_, line, reason):
            return "import line \(line): \(reason); nothing was imported"
        case let .importFailed(_, line, cause):
            return "import line \(line): \(cause); nothing was imported"
        case let .invalidSyncPage(entity, field, reason):
            return "pulled page of \(entity)" + (field.map { " (field \($0))" } ?? "") + ": \(reason); nothing of it was applied"
        case let .invalidStoredValue(type, value):
            return "\(FieldDescription.quoted(value)) is not a valid \(type)"
        case .misuse(let misuse):
            return misuse.description
        case let .readOnly(path, operation):
            return "store at \(path) is read-only; cannot \(operation)"
        case let .storeClosed(path):
            return "store at \(path) is closed"
        case let .createdByOtherProcess(what, path):
            return "\(what) was created in \(path) by another process after this read's tables were opened; read it again"
        case let .damagedStore(part, reason):
            return "\(part) is damaged: \(reason)"
        case let .damagedRecord(entity, id, reason):
            return "\(entity) with id \(id) cannot be decoded: \(reason)"
        case let .storage(code, message):
            return "storage error (\(code)): \(message)"
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
