import Coffer
import Foundation

/// One property of every type the sync wire format maps, synced, with a link: the model of
/// the tests that push, pull and apply values of every type (in both test targets).
///
/// ```swift
/// var sample = SyncedSample()
/// sample.uint64 = .max
/// try store.box(for: SyncedSample.self).put(&sample)
/// ```
@Sync
package struct SyncedSample: Entity {
    package var id: Id = 0
    package var flag = false
    package var int: Int = 0
    package var int8: Int8 = 0
    package var int16: Int16 = 0
    package var int32: Int32 = 0
    package var int64: Int64 = 0
    package var uint8: UInt8 = 0
    package var uint16: UInt16 = 0
    package var uint32: UInt32 = 0
    package var uint64: UInt64 = 0
    package var uint: UInt = 0
    package var float: Float = 0
    package var double: Double = 0
    package var string = ""
    package var date = Date(timeIntervalSinceReferenceDate: 0)
    package var data = Data()
    package var bytes: [UInt8] = []
    package var uuid = UUID()
    package var strings: [String] = []
    package var ints: [Int] = []
    package var int8s: [Int8] = []
    package var uint64s: [UInt64] = []
    package var doubles: [Double] = []
    package var floats: [Float] = []
    package var dates: [Date] = []
    package var bools: [Bool] = []
    package var uuids: [UUID] = []
    package var document: JSONValue = [:]
    package var counts: [String: Int] = [:]
    package var optionalText: String?
    package var home: SyncedPlace?
    package var owner: ToOne<SyncedOwner> = nil
}

// The initializers other modules call are in extensions (one inside the struct would
// remove the memberwise initializer the generated decoder calls), and differ from the
// synthesized ones, which are internal.
extension SyncedSample {
    package init(id: Id = 0) {
        self.id = id
    }
}

/// The embedded value of ``SyncedSample``.
///
/// ```swift
/// sample.home = SyncedPlace("Paris", zip: nil)
/// ```
package struct SyncedPlace: Embedded, Equatable {
    package var city = ""
    package var zip: String?
}

extension SyncedPlace {
    package init(_ city: String, zip: String?) {
        self.city = city
        self.zip = zip
    }
}

/// The link target of ``SyncedSample``.
///
/// ```swift
/// var owner = SyncedOwner(name: "Ada")
/// try store.box(for: SyncedOwner.self).put(&owner)
/// sample.owner = ToOne(id: owner.id)
/// ```
@Sync
package struct SyncedOwner: Entity {
    package var id: Id = 0
    package var name = ""
}

extension SyncedOwner {
    package init(name: String) {
        self.name = name
    }
}
