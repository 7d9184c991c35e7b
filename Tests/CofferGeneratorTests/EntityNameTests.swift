import CofferGeneratorCore
import Foundation
import Testing

@Suite struct EntityNameTests {
    @Test func entityLevelAnnotationsAreRefused() {
        let result = Generator.generate([SourceFile(path: "M.swift", text: "@Name(\"x\")\nstruct P: Entity {\n    var id: Id = 0\n}")])
        #expect(result.diagnostics.map(\.description) == [
            "M.swift:1:1: error: @Name applies to properties, not to the entity 'P'; to store the entity under another name, write @StoredAs(\"...\") on the type",
        ])
    }

    @Test func storedAsNamesTheEntityAndTheLinksToIt() {
        let source = """
            enum Inventory {
                @StoredAs("InventoryItem")
                struct Item: Entity {
                    var id: Id = 0
                }
            }
            struct Shelf: Entity {
                var id: Id = 0
                var item: ToOne<Inventory.Item> = nil
            }
            """
        let result = Generator.generate([SourceFile(path: "M.swift", text: source)])
        #expect(result.diagnostics.isEmpty)
        #expect(result.code.contains("storedName: \"InventoryItem\",\n        storedNameIsExplicit: true,"))
        #expect(result.code.contains("relationTarget: \"InventoryItem\""))
    }

    @Test func syncOutsideAnEntityIsReportedAtItsLine() {
        let result = Generator.generate([SourceFile(path: "M.swift", text: """
        @Sync
        struct Plain { var x = 1 }
        @Sync class Thing {}
        @Sync enum Kind { case a }
        @Sync extension Plain {}
        struct P: Entity {
            var id: Id = 0
            @Sync var name: String
        }
        @Sync(true)
        struct Q: Entity {
            var id: Id = 0
        }
        """)])
        #expect(result.diagnostics.map(\.description) == [
            "M.swift:1:1: error: @Sync applies to an entity struct (one declared 'struct X: Entity'), not to 'Plain', which is not an Entity",
            "M.swift:3:1: error: @Sync applies to an entity struct (one declared 'struct X: Entity'), not to class 'Thing'",
            "M.swift:4:1: error: @Sync applies to an entity struct (one declared 'struct X: Entity'), not to enum 'Kind'",
            "M.swift:5:1: error: @Sync applies to an entity struct (one declared 'struct X: Entity'), not to an extension of 'Plain'",
            "M.swift:8:5: error: @Sync applies to the entity, not to one of its properties: write it on the struct",
            "M.swift:10:1: error: @Sync takes no arguments: write @Sync on the entity",
        ])
    }

    @Test func malformedStoredAsIsReportedAtItsLine() {
        let result = Generator.generate([SourceFile(path: "M.swift", text: "@StoredAs(\"\")\nstruct P: Entity {\n    var id: Id = 0\n}")])
        #expect(result.diagnostics.map(\.description) == [
            "M.swift:1:1: error: @StoredAs takes one non-empty string literal: @StoredAs(\"...\")",
        ])
    }
}
