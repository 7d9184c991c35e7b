import ArgumentParser
import Coffer
import Foundation

struct Info: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Entities with object counts, properties with types and indexes, file size and map usage.")

    @Argument(help: "The store directory.")
    var directory: String

    func run() throws {
        let store = try openStoreOrFail(directory)
        let info = try failing { try store.info() }
        print("Store \(info.path)")
        print("  file \(formatBytes(info.fileSize)), map \(formatBytes(info.mapSize)), \(formatBytes(info.usedBytes)) used (\(info.mapSize > 0 ? info.usedBytes * 100 / info.mapSize : 0)%)")
        if info.entities.isEmpty { print("  no entities") }
        for entity in info.entities {
            print("\n\(entity.name) (entity id \(entity.id)): \(entity.count) object\(entity.count == 1 ? "" : "s")")
            print("  id: Id")
            for property in entity.properties {
                var notes: [String] = []
                if property.isUnique { notes.append("unique") } else if property.isIndexed { notes.append("indexed") }
                if let tokenizer = property.fullText { notes.append("full-text (\(tokenizer.rawValue)), \(property.fullTextEntries) index entries") }
                let suffix = notes.isEmpty ? "" : "  [\(notes.joined(separator: ", "))]"
                print("  \(property.name): \(property.swiftType) (\(property.type.rawValue), property id \(property.id))\(suffix)")
            }
        }
        try store.close()
    }
}
