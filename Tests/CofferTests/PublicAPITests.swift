import Foundation
import Testing

/// The public symbols of the `Coffer` module, read from its symbol graph, against the
/// checked-in list `PublicAPI.txt` beside this file: a new public symbol is a deliberate
/// change, and every public symbol has a `///` comment.
///
/// The list holds what a plain `import Coffer` offers: `@_spi(CofferGenerated)` hooks are
/// left out, while public symbols hidden from documentation or completion by other means
/// (`@_documentation(visibility:)`, an underscored name) are listed, since users can still
/// call them. To accept a change, rewrite the list and review its diff:
///
/// ```sh
/// COFFER_UPDATE_PUBLIC_API=1 swift test --filter PublicAPITests
/// ```
@Suite struct PublicAPITests {
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let listFile = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("PublicAPI.txt")

    struct Symbol: Comparable {
        let line: String
        let documented: Bool
        static func < (a: Symbol, b: Symbol) -> Bool { a.line < b.line }
    }

    @Test func publicSymbolsMatchTheCheckedInList() throws {
        let symbols = try Self.publicSymbols()
        let undocumented = symbols.filter { !$0.documented }.map(\.line)
        #expect(undocumented.isEmpty, "public symbols without a /// comment:\n\(undocumented.joined(separator: "\n"))")

        let current = symbols.map(\.line)
        let text = current.joined(separator: "\n") + "\n"
        if ProcessInfo.processInfo.environment["COFFER_UPDATE_PUBLIC_API"] != nil {
            try text.write(to: Self.listFile, atomically: true, encoding: .utf8)
            return
        }
        let expected = try String(contentsOf: Self.listFile, encoding: .utf8).split(separator: "\n").map(String.init)
        let difference = current.difference(from: expected)
        let added = difference.insertions.map { change -> String in
            guard case .insert(_, let line, _) = change else { return "" }
            return "+ " + line
        }
        let removed = difference.removals.map { change -> String in
            guard case .remove(_, let line, _) = change else { return "" }
            return "- " + line
        }
        #expect(
            difference.isEmpty,
            """
            The public API of Coffer changed (\(added.count) added, \(removed.count) removed):
            \((removed + added).joined(separator: "\n"))
            If the change is deliberate, rewrite the list and review its diff:
            COFFER_UPDATE_PUBLIC_API=1 swift test --filter PublicAPITests
            """)
    }

    /// Extracts the symbol graph of the built module and lists its public, non-SPI symbols
    /// as sorted "kind path: declaration" lines.
    static func publicSymbols() throws -> [Symbol] {
        let tools = try toolchainDirectory()
        let modules = try modulesDirectory()
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-symbols-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: output, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: output) }

        let triple = try targetTriple(swiftc: tools.appendingPathComponent("swiftc"))
        // At `internal` (not `public`) so that public symbols hidden from documentation are
        // listed too; SPI symbols stay out without `-include-spi-symbols`.
        try run(tools.appendingPathComponent("swift-symbolgraph-extract"), [
            "-module-name", "Coffer", "-target", triple,
            "-I", modules.path, "-I", packageRoot.appendingPathComponent("Sources/CLMDB").path,
            "-minimum-access-level", "internal", "-skip-synthesized-members",
            "-output-dir", output.path,
        ])

        var symbols: [Symbol] = []
        for file in try FileManager.default.contentsOfDirectory(atPath: output.path) where file.hasSuffix(".symbols.json") {
            let data = try Data(contentsOf: output.appendingPathComponent(file))
            let graph = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            for case let symbol as [String: Any] in graph["symbols"] as? [Any] ?? [] {
                guard symbol["accessLevel"] as? String == "public", symbol["spi"] as? Bool != true else { continue }
                let kind = ((symbol["kind"] as? [String: Any])?["identifier"] as? String ?? "?")
                    .replacingOccurrences(of: "swift.", with: "")
                let path = (symbol["pathComponents"] as? [String] ?? []).joined(separator: ".")
                let fragments = symbol["declarationFragments"] as? [[String: Any]] ?? []
                let declaration = fragments.compactMap { $0["spelling"] as? String }.joined()
                    .split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
                let constraints = ((symbol["swiftExtension"] as? [String: Any])?["constraints"] as? [[String: Any]] ?? [])
                    .map { "\($0["lhs"] as? String ?? "") \($0["kind"] as? String == "sameType" ? "==" : ":") \($0["rhs"] as? String ?? "")" }
                let condition = constraints.isEmpty ? "" : " (where \(constraints.joined(separator: ", ")))"
                symbols.append(Symbol(line: "\(kind) \(path): \(declaration)\(condition)", documented: symbol["docComment"] != nil))
            }
        }
        return symbols.sorted()
    }

    /// The directory of `swiftc` and `swift-symbolgraph-extract`: the toolchain of the `swift`
    /// on PATH, else /opt/swift.
    static func toolchainDirectory() throws -> URL {
        let searched = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init) + ["/opt/swift/usr/bin"]
        for directory in searched {
            for name in ["swiftc", "swift"] {
                let candidate = URL(fileURLWithPath: directory).appendingPathComponent(name)
                guard FileManager.default.isExecutableFile(atPath: candidate.path) else { continue }
                let tools = candidate.resolvingSymlinksInPath().deletingLastPathComponent()
                if FileManager.default.isExecutableFile(atPath: tools.appendingPathComponent("swift-symbolgraph-extract").path) {
                    return tools
                }
            }
        }
        throw ToolError("no toolchain with swift-symbolgraph-extract on PATH or in /opt/swift")
    }

    /// The directory holding the built `Coffer.swiftmodule`: found from the test bundle's
    /// path (SwiftPM 6 puts modules in `Modules/` beside the products, earlier ones beside them).
    static func modulesDirectory() throws -> URL {
        var starts: [String] = [CommandLine.arguments[0], Bundle.main.bundlePath]
        if let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") { starts.insert(executable, at: 0) }
        for start in starts {
            var directory = URL(fileURLWithPath: start).deletingLastPathComponent()
            while directory.pathComponents.count > 1 {
                for candidate in [directory.appendingPathComponent("Modules"), directory]
                where FileManager.default.fileExists(atPath: candidate.appendingPathComponent("Coffer.swiftmodule").path) {
                    return candidate
                }
                directory.deleteLastPathComponent()
            }
        }
        throw ToolError("Coffer.swiftmodule not found above \(starts)")
    }

    /// The target triple the compiler builds for (the module was built with it).
    static func targetTriple(swiftc: URL) throws -> String {
        let info = try run(swiftc, ["-print-target-info"])
        let json = try JSONSerialization.jsonObject(with: Data(info.utf8)) as? [String: Any]
        guard let triple = (json?["target"] as? [String: Any])?["triple"] as? String else {
            throw ToolError("no target triple in swiftc -print-target-info")
        }
        return triple
    }

    @discardableResult
    static func run(_ tool: URL, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = tool
        process.arguments = arguments
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        let errorData = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw ToolError("\(tool.lastPathComponent) failed: \(String(decoding: errorData, as: UTF8.self))")
        }
        return String(decoding: data, as: UTF8.self)
    }

    struct ToolError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
