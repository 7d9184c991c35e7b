import Foundation
import Testing

/// Every Swift code block of the README and of the DocC articles is a copy of lines in a
/// program that CI compiles and runs (`Examples/`), so no example can drift from the API.
///
/// A block matches when its non-blank lines, with leading and trailing spaces removed, are
/// consecutive non-blank lines of one Swift file under `Examples/` (indentation may differ:
/// an example may sit inside a function there). A manifest fragment names the package by its
/// URL where the example packages use a path.
@Suite struct DocumentationExampleTests {
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The manifest line a user writes, and the one the example packages use instead.
    static let packageLine = (
        documented: #".package(url: "https://github.com/<you>/coffer.git", branch: "main")"#,
        compiled: #".package(name: "coffer", path: "../..")"#
    )

    struct Block: CustomStringConvertible {
        var file: String
        var line: Int
        var lines: [String]
        var description: String { "\(file):\(line) (\(lines.first ?? ""))" }
    }

    static func normalized(_ text: Substring) -> [String] {
        text.split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }
    }

    /// The languages a fence may name besides Swift: their blocks are shell commands, SQL,
    /// JSON or plain text, which no Swift program can hold.
    static let otherLanguages: Set<String> = ["", "sh", "sql", "json", "text"]

    /// The ```swift blocks of a Markdown file. A fence naming any other language than
    /// `otherLanguages` is an issue, so that a misspelt `Swift` block is not skipped unseen.
    static func swiftBlocks(in file: URL, named name: String) throws -> [Block] {
        let lines = try String(contentsOf: file, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
        var blocks: [Block] = []
        var current: (start: Int, lines: [Substring])?
        var inOtherFence = false
        for (number, line) in lines.enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if var open = current {
                if trimmed == "```" {
                    let text = open.lines.joined(separator: "\n")
                        .replacingOccurrences(of: packageLine.documented, with: packageLine.compiled)
                    blocks.append(Block(file: name, line: open.start, lines: normalized(Substring(text))))
                    current = nil
                } else {
                    open.lines.append(line)
                    current = open
                }
            } else if inOtherFence {
                if trimmed == "```" { inOtherFence = false }
            } else if trimmed.hasPrefix("```") {
                let language = trimmed.dropFirst(3).trimmingCharacters(in: .whitespaces)
                if language == "swift" {
                    current = (number + 1, [])
                } else {
                    #expect(otherLanguages.contains(language), "\(name):\(number + 1): a fence of unknown language `\(language)`")
                    inOtherFence = true
                }
            }
        }
        #expect(current == nil && !inOtherFence, "\(name): a code block is not closed")
        return blocks
    }

    static func files(under directory: String, ending suffix: String) -> [URL] {
        let root = packageRoot.appendingPathComponent(directory)
        guard let walker = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil) else { return [] }
        var found: [URL] = []
        for case let url as URL in walker {
            if url.lastPathComponent == ".build" { walker.skipDescendants() } else if url.lastPathComponent.hasSuffix(suffix) { found.append(url) }
        }
        return found.sorted { $0.path < $1.path }
    }

    @Test func everySwiftBlockOfTheDocumentationIsCompiledCode() throws {
        var documents = [Self.packageRoot.appendingPathComponent("README.md")]
        documents += Self.files(under: "Sources", ending: ".md").filter { $0.path.contains(".docc/") }
        let blocks = try documents.flatMap { document in
            try Self.swiftBlocks(in: document, named: String(document.path.dropFirst(Self.packageRoot.path.count + 1)))
        }
        #expect(blocks.count >= 25, "found only \(blocks.count) blocks: did the documents move?")
        let programs = try Self.programs()
        for block in blocks where !block.lines.isEmpty {
            let copied = Self.isCopied(block, in: programs)   // (a bare Bool: a failure names the block, not every program)
            #expect(copied, "\(block) is not a copy of lines of a program under Examples/")
        }
    }

    /// The non-blank lines of every Swift file under `Examples/`.
    static func programs() throws -> [[String]] {
        try files(under: "Examples", ending: ".swift").map { normalized(Substring(try String(contentsOf: $0, encoding: .utf8))) }
    }

    static func isCopied(_ block: Block, in programs: [[String]]) -> Bool {
        programs.contains { program in
            program.count >= block.lines.count && (0...(program.count - block.lines.count)).contains { start in
                program[start..<(start + block.lines.count)].elementsEqual(block.lines)
            }
        }
    }

    @Test func theCheckFindsABlockThatDrifted() throws {
        let drifted = FileManager.default.temporaryDirectory.appendingPathComponent("drifted-\(UUID()).md")
        try "Text.\n\n```swift\nlet store = try Store(directory: \"nowhere\")\nlet books = store.box(for: NoSuchEntity.self)\n```\n"
            .write(to: drifted, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: drifted) }
        let blocks = try Self.swiftBlocks(in: drifted, named: "drifted.md")
        #expect(blocks.count == 1 && blocks[0].line == 3 && blocks[0].lines.count == 2)
        let programs = try Self.programs()
        #expect(!Self.isCopied(blocks[0], in: programs))
        let readme = try Self.swiftBlocks(in: Self.packageRoot.appendingPathComponent("README.md"), named: "README.md")
        #expect(readme.first.map { Self.isCopied($0, in: programs) } == true)
    }
}
