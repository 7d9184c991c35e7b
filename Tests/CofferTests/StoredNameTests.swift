@testable import Coffer
import CLMDB
import Foundation
import Testing

@Suite struct StoredNameTests {
    @Test func twoTypesWithOneSimpleNameAreRefused() throws {
        try withStore { (store: Store) throws in
            try store.box(for: Shop.Item.self).put(Shop.Item(price: 2))
            #expect { try store.box(for: Inventory.Item.self).count() } throws: { error in
                guard case CofferError.misuse(.sharedStoredName("Item", let type, let other, _)) = error else { return false }
                return Set([type, other]) == ["Shop.Item", "Inventory.Item"] && error.localizedDescription.contains("@StoredAs")
            }
            #expect(try store.box(for: Shop.Item.self).all().map(\.price) == [2])
        }
    }

    @Test func storedAsNamesTheEntityAndItsLinks() throws {
        try withStore { (store: Store) throws in
            #expect(Inventory.Bin._cofferSchema.storedName == "InventoryBin")
            #expect(Shelf._cofferSchema.properties[1].relationTarget == "InventoryBin")
            let bins = store.box(for: Inventory.Bin.self)
            let shelves = store.box(for: Shelf.self)
            let bin = try bins.put(Inventory.Bin(label: "A1"))
            var shelf = Shelf()
            shelf.bin.targetId = bin
            try shelves.put(&shelf)
            #expect(try store.info().entities.contains { $0.name == "InventoryBin" })
            try bins.remove(bin)   // clears the link, found through the stored name
            #expect(try shelves.get(shelf.id)?.bin.targetId == nil)
        }
    }
}
