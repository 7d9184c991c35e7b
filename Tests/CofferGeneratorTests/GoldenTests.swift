import CofferGeneratorCore
import Foundation
import Testing

@Suite struct GoldenTests {
    func fixture(_ name: String) throws -> String {
        let url = try #require(Bundle.module.url(forResource: name, withExtension: nil, subdirectory: "Fixtures"))
        return try String(contentsOf: url, encoding: .utf8)
    }

    /// Input source -> expected generated file, byte for byte. To update after an intended
    /// change, run with `COFFER_UPDATE_GOLDEN=1` and review the diff.
    @Test func generatedFileMatchesGolden() throws {
        let input = try fixture("Models.input.txt")
        let result = Generator.generate([SourceFile(path: "Models.swift", text: input)])
        #expect(result.diagnostics.isEmpty)
        if ProcessInfo.processInfo.environment["COFFER_UPDATE_GOLDEN"] != nil {
            let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
                .appendingPathComponent("Fixtures/Models.expected.txt")
            try result.code.write(to: path, atomically: true, encoding: .utf8)
        }
        #expect(result.code == (try fixture("Models.expected.txt")))
    }

    /// `@Sync` entities carry `isSynced: true` in their schema; the others are generated as
    /// without it. Updated like the main golden file.
    @Test func syncedEntitiesMatchGolden() throws {
        let input = try fixture("SyncModels.input.txt")
        let result = Generator.generate([SourceFile(path: "SyncModels.swift", text: input)])
        #expect(result.diagnostics.isEmpty)
        if ProcessInfo.processInfo.environment["COFFER_UPDATE_GOLDEN"] != nil {
            let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
                .appendingPathComponent("Fixtures/SyncModels.expected.txt")
            try result.code.write(to: path, atomically: true, encoding: .utf8)
        }
        let expected = try fixture("SyncModels.expected.txt")
        #expect(result.code == expected)
        #expect(expected.components(separatedBy: "isSynced: true").count == 3)
        // The non-synced entity's code is what it is without any @Sync in the file.
        let plain = Generator.generate([SourceFile(path: "SyncModels.swift", text: input.replacingOccurrences(of: "@Sync\n", with: ""))])
        #expect(plain.code == result.code.replacingOccurrences(of: "        isSynced: true,\n", with: ""))
    }

    @Test func noEntitiesStillGivesACompilableFile() {
        let result = Generator.generate([SourceFile(path: "Empty.swift", text: "struct Plain { var x = 1 }")])
        #expect(result.diagnostics.isEmpty)
        #expect(!result.code.contains("extension"))
        #expect(result.code.contains("import Coffer"))
    }
}
