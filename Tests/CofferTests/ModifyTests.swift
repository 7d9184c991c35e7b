@testable import Coffer
import Foundation
import Testing

/// `Box.modifyEach` and `Box.modify(_:_:)`: objects changed in place and stored back in one
/// transaction, with the rules of a put, against a plain model.
@Suite struct ModifyTests {
    @Test func modifyEachChangesEveryObjectAlongAModel() throws {
        try withStore { (store: Store) throws in
            let box = store.box(for: Message.self)
            #expect(try box.modifyEach { $0.position += 1 } == 0)
            var generator = SplitMix64(state: 3)
            var messages = (0..<1500).map { Message(conversation: $0 % 7, position: $0, text: String(repeating: "a", count: $0 % 50)) }
            try box.put(&messages)
            var model = Dictionary(uniqueKeysWithValues: messages.map { ($0.id, $0) })
            for _ in 0..<3 {
                var order: [Id] = []
                let visited = try box.modifyEach { message in
                    order.append(message.id)
                    #expect(model[message.id] == message)
                    // Random sizes move records between pages; some objects stay as they are.
                    switch Int.random(in: 0..<4, using: &generator) {
                    case 0: break
                    case 1: message.conversation = Int.random(in: 0..<7, using: &generator)
                    default:
                        message.text = String(repeating: "m", count: Int.random(in: 0...700, using: &generator))
                        message.isUnread.toggle()
                    }
                    model[message.id] = message
                }
                #expect(visited == model.count && order == model.keys.sorted())
                #expect(try box.all() == model.values.sorted { $0.id < $1.id })
                for conversation in 0..<7 {
                    #expect(try box.query { Message.conversation == conversation }.build().find().map(\.id)
                            == model.values.filter { $0.conversation == conversation }.map(\.id).sorted())
                }
                #expect(try IndexProbe.isConsistent(store, Message.self))
                #expect(try store.verify().isIntact)
            }
        }
    }

    @Test func anIdChangeIsRefusedAndNothingIsStored() throws {
        try withStore { (store: Store) throws in
            let box = store.box(for: Message.self)
            let before = try box.put((0..<10).map { Message(conversation: 1, position: $0) })
            let stored = try box.all()
            do {
                try box.modifyEach { message in
                    message.position += 100
                    if message.id == before[4] { message.id = 99 }
                }
                Issue.record("an id change was stored")
            } catch CofferError.misuse(.idChangedInModify(let entity, let from, let to)) {
                #expect(entity == "Message" && from == before[4] && to == 99)
            }
            #expect(try box.all() == stored, "its own transaction rolled back")
            #expect(try box.get(99) == nil)
        }
    }

    @Test func putRulesHold() throws {
        try withStore { (store: Store) throws in
            let contacts = store.box(for: Contact.self)
            try contacts.put([Contact(email: "a@x", city: "Oslo", age: 30), Contact(email: "b@x", city: "Rome", age: 40)])
            let before = try contacts.all()
            // Timestamps and indexes, as a put keeps them.
            try contacts.modifyEach { contact in contact.age += 1 }
            let after = try contacts.all()
            #expect(after.map(\.age) == [31, 41])
            #expect(zip(before, after).allSatisfy { $0.created == $1.created && $1.modified > $0.modified })
            #expect(try contacts.query { Contact.age == 41 }.build().find().map(\.city) == ["Rome"])
            // A unique conflict throws and leaves the store as it was.
            #expect(throws: CofferError.self) {
                try contacts.modifyEach { contact in contact.email = "same@x" }
            }
            #expect(try contacts.all().map(\.email) == ["a@x", "b@x"])
            #expect(try IndexProbe.isConsistent(store, Contact.self))
            // Inside a write that throws afterwards, nothing stays.
            struct Boom: Error {}
            #expect(throws: Boom.self) {
                try store.write {
                    try contacts.modifyEach { contact in contact.city = "Lima" }
                    #expect(try contacts.all().map(\.city) == ["Lima", "Lima"], "the write sees its own changes")
                    throw Boom()
                }
            }
            #expect(try contacts.all().map(\.city) == ["Oslo", "Rome"])
        }
    }

    /// Bytes from disk are untrusted: a damaged record met by the walk ends it with
    /// `damagedRecord` naming the entity and id, and its own transaction stores nothing; a
    /// mutation that still parses is changed like any record and leaves the store intact.
    @Test func damagedRecordsEndTheWalkAndStoreNothing() throws {
        try withStore { (store: Store) throws in
            let box = store.box(for: Message.self)
            let ids = try box.put((0..<20).map { Message(conversation: $0 % 3, position: $0, text: "text \($0)") })
            let target = ids[9]
            let original: [UInt8] = try store.performRead { transaction in
                let binding = try #require(try store.binding(for: Message.self, in: transaction))
                return Array(try #require(try transaction.record(target, table: binding.table, entity: "Message")))
            }
            var generator = SplitMix64(state: 11)
            var (refused, changed) = (0, 0)
            for _ in 0..<60 {
                var bytes = original
                switch Int.random(in: 0..<3, using: &generator) {
                case 0: bytes[Int.random(in: 0..<bytes.count, using: &generator)] ^= UInt8.random(in: 1...255, using: &generator)
                case 1: bytes.removeLast(Int.random(in: 1...bytes.count, using: &generator))
                default: bytes += (0..<Int.random(in: 1...4, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
                }
                try Damage.overwriteRecord(store, Message.self, id: target, with: bytes)
                let others = try ids.filter { $0 != target }.map { try box.get($0) }
                // A mutation of the indexed value leaves a stale index entry: damage before
                // the walk, which the walk need not repair.
                let intactBefore = try store.verify().isIntact
                do {
                    try box.modifyEach { $0.position += 1_000 }
                    changed += 1
                    if intactBefore { #expect(try store.verify().isIntact) }
                    try box.modifyEach { $0.position -= 1_000 }
                } catch {
                    #expect(Damage.isCorrupt(error, entity: "Message", id: target), "\(error)")
                    refused += 1
                    #expect(try ids.filter { $0 != target }.map { try box.get($0) } == others, "nothing stored")
                }
                try Damage.overwriteRecord(store, Message.self, id: target, with: original)
            }
            #expect(refused > 0 && refused + changed == 60)
            #expect(try box.get(target)?.position == 9)
        }
    }

    /// A write that fills the map runs again in a grown map, from the objects as stored: each
    /// object is changed once, as in a first run.
    @Test func aRetryAfterMapGrowthChangesEachObjectOnce() throws {
        try withStore(options: StoreOptions(initialMapSize: 1 << 20, durability: .noSync)) { (store: Store) throws in
            let box = store.box(for: Message.self)
            try box.put((0..<400).map { Message(conversation: $0 % 3, position: $0) })
            let info = try store.info()
            let visited = try box.modifyEach { message in
                message.position += 1_000
                message.text = String(repeating: "y", count: 4_000)
            }
            #expect(try store.info().mapSize > info.mapSize, "the map grew")
            #expect(visited == 400)
            #expect(try box.all().map(\.position) == (0..<400).map { $0 + 1_000 })
            #expect(try store.verify().isIntact)
        }
    }

    @Test func modifyOneObjectStoresWhatTheBodyChanged() throws {
        try withStore { (store: Store) throws in
            let box = store.box(for: Message.self)
            var generator = SplitMix64(state: 11)
            var messages = (0..<200).map { Message(conversation: $0 % 5, position: $0) }
            try box.put(&messages)
            var model = Dictionary(uniqueKeysWithValues: messages.map { ($0.id, $0) })
            for _ in 0..<300 {
                let id = messages[Int.random(in: 0..<messages.count, using: &generator)].id
                let conversation = Int.random(in: 0..<5, using: &generator)
                let stored = try box.modify(id) { message in
                    #expect(model[id] == message)
                    message.conversation = conversation
                    message.text += "x"
                }
                model[id]?.conversation = conversation
                model[id]?.text += "x"
                #expect(stored == model[id])
            }
            #expect(try box.all() == model.values.sorted { $0.id < $1.id })
            for conversation in 0..<5 {
                #expect(try box.query { Message.conversation == conversation }.build().find().map(\.id)
                        == model.values.filter { $0.conversation == conversation }.map(\.id).sorted())
            }
            #expect(try IndexProbe.isConsistent(store, Message.self))
        }
    }

    @Test func modifyOfAMissingObjectThrowsNotFoundAndWritesNothing() throws {
        try withStore { (store: Store) throws in
            let box = store.box(for: Message.self)
            let id = try box.put(Message(conversation: 1, position: 1))
            let stored = try box.get(id)
            for missing in [0, id + 1, Id.max] as [Id] {
                do {
                    try box.modify(missing) { _ in Issue.record("body called for a missing object") }
                    Issue.record("no error for a missing object")
                } catch CofferError.notFound(let entity, let notFound) {
                    #expect(entity == "Message" && notFound == missing)
                }
            }
            #expect(try box.get(id) == stored && box.count() == 1)
        }
    }

    @Test func aFailedModifyLeavesTheObjectAsStored() throws {
        struct Refused: Error {}
        try withStore { (store: Store) throws in
            let box = store.box(for: Message.self)
            let id = try box.put(Message(conversation: 1, position: 1))
            let stored = try box.get(id)
            #expect(throws: Refused.self) {
                try box.modify(id) { message in message.position = 7; throw Refused() }
            }
            do {
                try box.modify(id) { message in message.id = id + 5 }
                Issue.record("an id change was stored")
            } catch CofferError.misuse(.idChangedInModify(let entity, let from, let to)) {
                #expect(entity == "Message" && from == id && to == id + 5)
            }
            #expect(try box.get(id) == stored && box.count() == 1)
            // Inside a transaction the closure decides: a later throw rolls the modify back.
            #expect(throws: Refused.self) {
                try store.write {
                    try box.modify(id) { $0.position = 9 }
                    #expect(try box.get(id)?.position == 9)
                    throw Refused()
                }
            }
            #expect(try box.get(id) == stored)
        }
    }
}
