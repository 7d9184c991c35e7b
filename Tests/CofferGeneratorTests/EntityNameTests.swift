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

    @Test func malformedStoredAsIsReportedAtItsLine() {
        let result = Generator.generate([SourceFile(path: "M.swift", text: "@StoredAs(\"\")\nstruct P: Entity {\n    var id: Id = 0\n}")])
        #expect(result.diagnostics.map(\.description) == [
            "M.swift:1:1: error: @StoredAs takes one non-empty string literal: @StoredAs(\"...\")",
        ])
    }
}
