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

    @Test func noEntitiesStillGivesACompilableFile() {
        let result = Generator.generate([SourceFile(path: "Empty.swift", text: "struct Plain { var x = 1 }")])
        #expect(result.diagnostics.isEmpty)
        #expect(!result.code.contains("extension"))
        #expect(result.code.contains("import Coffer"))
    }
}
