import Foundation

/// One page of an entity's changes as a sync server's pull returns it (`coffer_pull`),
/// checked for its structure before anything of it is applied:
///
/// ```json
/// {"changes": [{"op": "upsert", "id": "<uuid>", "txid": "812", "hlc": "<hlc>", "origin": "<uuid>" | null,
///               "clocks": {"title": [<hlc>, "<uuid>" | null]}, "fields": {"title": "Write", ...}},
///              {"op": "delete", "id": "<uuid>", "txid": "813", "hlc": "<hlc>", "origin": null}],
///  "cursor": "813", "more": false, "clock": "<the server's hlc>", "moved": false}
/// ```
///
/// Clocks are unsigned 64-bit integers, as JSON integers or decimal strings; a missing or
/// null origin (a plain-SQL write) counts as the nil UUID, which orders below every client's.
/// Members the format does not name are ignored (a newer server may add some); a member
/// given twice, a value of the wrong JSON type, or anything that is not JSON refuses the
/// whole page (``CofferError/invalidSyncPage(entity:field:reason:)``).
struct PulledPage {
    /// A write's clock and the replica it came from: the order of last-writer-wins.
    struct Stamp: Comparable {
        let clock: UInt64
        let origin: UUID

        static func < (a: Stamp, b: Stamp) -> Bool {
            if a.clock != b.clock { return a.clock < b.clock }
            // As PostgreSQL orders uuid values: by their bytes.
            return a.origin.syncBytes.lexicographicallyPrecedes(b.origin.syncBytes)
        }

        static func == (a: Stamp, b: Stamp) -> Bool { a.clock == b.clock && a.origin == b.origin }
    }

    struct Change {
        enum Operation { case upsert, delete }
        let operation: Operation
        let syncId: UUID
        /// The row's clock and origin (of its latest write).
        let stamp: Stamp
        /// Each field's clock and origin, by stored name; a field without one has the row's.
        let clocks: [String: Stamp]
        /// The field values by stored name, in the server's wire form (upserts only).
        let fields: [JSONMember]
        /// The change as parsed (its text is kept for conflicts).
        let node: JSONNode

        /// The change as compact JSON text.
        var text: String { node.text }

        func stamp(of field: String) -> Stamp { clocks[field] ?? stamp }
    }

    static let nilOrigin = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
    /// Cursors are short (`"813"`, `"813/<uuid>"`); a longer one is refused rather than stored.
    static let maximumCursorLength = 200
    /// The longest wake key a page may give (an entity name, a slash and a hash are far shorter).
    static let maximumWakeKeyLength = 512

    /// A row the server could not send, too large for a page (`{"op": "oversized", "id",
    /// "bytes"}`): the page goes on past it, and the replica reports it.
    struct Oversized: Equatable {
        let syncId: UUID
        /// The row's size as the server counted it.
        let bytes: Int
    }

    let changes: [Change]
    /// The rows of the page the server left out as too large, in page order.
    let oversized: [Oversized]
    let cursor: String
    let more: Bool
    /// Whether the server says rows may have moved into or out of the pulled scope in this
    /// page's span without changing themselves (`"moved"`; false when the page does not say):
    /// the replica then compares the ids it holds with the scope's.
    let moved: Bool
    /// The key of the server's wake-ups that concern this pull (`"wake"`; nil when the page
    /// does not give one): the replica names it when it waits for changes.
    let wake: String?
    /// The highest clock of the page (0 for an empty page), for the replica's clock.
    let highestClock: UInt64
    /// The server's clock when it answered (`"clock"`; 0 when the page does not give it), which
    /// a replica whose clock is slow catches up with.
    let serverClock: UInt64

    init(parsing bytes: [UInt8], entity: String) throws {
        func refuse(_ reason: String) -> CofferError { CofferError.invalidSyncPage(entity: entity, field: nil, reason: reason) }
        let root: JSONNode
        do {
            root = try JSONParser.parse(bytes)
        } catch {
            throw refuse("the page is not JSON: \(error)")
        }
        let members = try Self.members(of: root, "the page", refuse)
        guard case .array(let elements)? = members["changes"] else {
            throw refuse("the page needs \"changes\", an array, not \(members["changes"]?.text ?? "nothing")")
        }
        guard case .string(let cursor)? = members["cursor"], !cursor.isEmpty, cursor.utf8.count <= Self.maximumCursorLength,
              cursor.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F }) else {
            throw refuse("the page needs \"cursor\", a string of 1 to \(Self.maximumCursorLength) printable ASCII characters, not \(members["cursor"]?.text.prefix(100) ?? "nothing")")
        }
        var more = false
        switch members["more"] {
        case nil, .null?: more = false
        case .bool(let flag)?: more = flag
        case let other?: throw refuse("\"more\" must be true or false, not \(other.text.prefix(100))")
        }
        var moved = false
        switch members["moved"] {
        case nil, .null?: moved = false
        case .bool(let flag)?: moved = flag
        case let other?: throw refuse("\"moved\" must be true or false, not \(other.text.prefix(100))")
        }
        var wake: String?
        switch members["wake"] {
        case nil, .null?: break
        case .string(let key)? where !key.isEmpty && key.utf8.count <= Self.maximumWakeKeyLength
            && !key.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }):
            wake = key
        case let other?:
            throw refuse("\"wake\" must be a string of 1 to \(Self.maximumWakeKeyLength) bytes with no control characters, not \(other.text.prefix(100))")
        }
        var serverClock: UInt64 = 0
        switch members["clock"] {
        case nil, .null?: break
        case let node?:
            guard let clock = Self.clock(node) else { throw refuse("\"clock\" must be an unsigned 64-bit integer, not \(node.text.prefix(100))") }
            serverClock = clock
        }
        var changes: [Change] = []
        changes.reserveCapacity(elements.count)
        var oversized: [Oversized] = []
        var highest: UInt64 = 0
        for (index, element) in elements.enumerated() {
            if let marker = try Self.oversizedMarker(element, index: index, refuse) {
                oversized.append(marker)
                continue
            }
            let change = try Self.change(element, index: index, refuse)
            highest = max(highest, change.stamp.clock, change.clocks.values.map(\.clock).max() ?? 0)
            changes.append(change)
        }
        self.changes = changes
        self.oversized = oversized
        self.cursor = cursor
        self.more = more
        self.moved = moved
        self.wake = wake
        highestClock = highest
        self.serverClock = serverClock
    }

    /// One change read back from its text (a parked conflict's row).
    static func change(text: String, entity: String) throws -> Change {
        func refuse(_ reason: String) -> CofferError { CofferError.invalidSyncPage(entity: entity, field: nil, reason: reason) }
        let node: JSONNode
        do {
            node = try JSONParser.parse(Array(text.utf8))
        } catch {
            throw refuse("a parked change is not JSON: \(error)")
        }
        return try change(node, index: 0, refuse)
    }

    private static func members(of node: JSONNode, _ what: String, _ refuse: (String) -> CofferError) throws -> [String: JSONNode] {
        guard case .object(let list) = node else { throw refuse("\(what) must be a JSON object, not \(node.kind)") }
        var members: [String: JSONNode] = [:]
        for member in list {
            guard members.updateValue(member.value, forKey: member.key) == nil else {
                throw refuse("\(what) gives \(FieldDescription.quoted(member.key)) twice")
            }
        }
        return members
    }

    /// The marker of a row too large to send (`"op": "oversized"`, its `"id"` and
    /// `"bytes"`), or nil for any other change.
    private static func oversizedMarker(_ node: JSONNode, index: Int, _ refuse: (String) -> CofferError) throws -> Oversized? {
        guard case .object(let list) = node, list.contains(where: { $0.key == "op" && $0.value == .string("oversized") }) else { return nil }
        let members = try members(of: node, "change \(index)", refuse)
        guard case .string(let idText)? = members["id"], let syncId = UUID(canonicalText: idText) else {
            throw refuse("change \(index) needs \"id\", a UUID string, not \(members["id"]?.text.prefix(100) ?? "nothing")")
        }
        var bytes = 0
        if let node = members["bytes"] {
            guard let size = clock(node), size <= UInt64(Int.max) else {
                throw refuse("change \(index) (\(idText)) has \"bytes\" that are not a size: \(node.text.prefix(100))")
            }
            bytes = Int(size)
        }
        return Oversized(syncId: syncId, bytes: bytes)
    }

    private static func change(_ node: JSONNode, index: Int, _ refuse: (String) -> CofferError) throws -> Change {
        let what = "change \(index)"
        let members = try members(of: node, what, refuse)
        guard case .string(let idText)? = members["id"], let syncId = UUID(canonicalText: idText) else {
            throw refuse("\(what) needs \"id\", a UUID string, not \(members["id"]?.text.prefix(100) ?? "nothing")")
        }
        let named = "\(what) (\(idText))"
        let operation: Change.Operation
        switch members["op"] {
        case .string("upsert")?: operation = .upsert
        case .string("delete")?: operation = .delete
        default: throw refuse("\(named) needs \"op\", \"upsert\" or \"delete\", not \(members["op"]?.text.prefix(100) ?? "nothing")")
        }
        guard let hlcNode = members["hlc"], let clock = Self.clock(hlcNode) else {
            throw refuse("\(named) needs \"hlc\", an unsigned 64-bit integer, not \(members["hlc"]?.text.prefix(100) ?? "nothing")")
        }
        guard let origin = Self.origin(members["origin"] ?? .null) else {
            throw refuse("\(named) has an \"origin\" that is neither a UUID string nor null: \(members["origin"]?.text.prefix(100) ?? "")")
        }
        let stamp = Stamp(clock: clock, origin: origin)
        var clocks: [String: Stamp] = [:]
        var fields: [JSONMember] = []
        if operation == .upsert {
            switch members["fields"] {
            case .object(let list)?:
                var seen = Set<String>()
                for member in list where !seen.insert(member.key).inserted {
                    throw refuse("\(named) gives the field \(FieldDescription.quoted(member.key)) twice")
                }
                fields = list
            case nil, .null?: break
            case let other?: throw refuse("\(named) has \"fields\" that are not an object: \(other.text.prefix(100))")
            }
            switch members["clocks"] {
            case .object(let list)?:
                for member in list {
                    guard let fieldStamp = Self.fieldStamp(member.value, row: stamp) else {
                        throw refuse("\(named) has a clock of \(FieldDescription.quoted(member.key)) that is not [hlc, origin]: \(member.value.text.prefix(100))")
                    }
                    guard clocks.updateValue(fieldStamp, forKey: member.key) == nil else {
                        throw refuse("\(named) gives the clock of \(FieldDescription.quoted(member.key)) twice")
                    }
                }
            case nil, .null?: break
            case let other?: throw refuse("\(named) has \"clocks\" that are not an object: \(other.text.prefix(100))")
            }
        }
        return Change(operation: operation, syncId: syncId, stamp: stamp, clocks: clocks, fields: fields, node: node)
    }

    /// A clock: a JSON integer or a decimal string, 0...2^64-1.
    private static func clock(_ node: JSONNode) -> UInt64? {
        switch node {
        case .number(let number): return number.uint64
        case .string(let text): return text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) ? UInt64(text) : nil
        default: return nil
        }
    }

    /// An origin: a UUID string, or null (a plain-SQL write): the nil UUID.
    private static func origin(_ node: JSONNode) -> UUID? {
        switch node {
        case .null: return nilOrigin
        case .string(let text): return UUID(canonicalText: text)
        default: return nil
        }
    }

    /// A field's clock: `[hlc, origin]`, or a bare hlc (the row's origin).
    private static func fieldStamp(_ node: JSONNode, row: Stamp) -> Stamp? {
        if case .array(let pair) = node {
            guard pair.count == 2 || pair.count == 1, let clock = clock(pair[0]) else { return nil }
            guard let origin = pair.count == 2 ? origin(pair[1]) : row.origin else { return nil }
            return Stamp(clock: clock, origin: origin)
        }
        return clock(node).map { Stamp(clock: $0, origin: row.origin) }
    }
}
