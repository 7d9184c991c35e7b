@_spi(CofferGenerated) @testable import Coffer
import CLMDB
import Foundation
import Testing

@Suite struct ReplaceOnUpdateTests {
    /// Regression: an update that replaces another holder must keep its own index entry.
    @Test func updatingIntoAReplacedValueKeepsTheIndexConsistent() throws {
        try withStore { (store: Store) throws in
            let accounts = store.box(for: Account.self)
            var a = Account(handle: "@a", balance: 1)
            try accounts.put(&a)
            try accounts.put(Account(handle: "@b", balance: 2))
            a.handle = "@b"
            try accounts.put(&a)
            #expect(try accounts.all().map(\.balance) == [1])
            #expect(try IndexProbe.isConsistent(store, Account.self))
            #expect(try IndexProbe.ids(store, Account.handle, like: a) == [a.id])
        }
    }
}
