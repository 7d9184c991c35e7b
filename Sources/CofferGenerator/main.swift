import CofferGeneratorCore
import Foundation

// Usage: CofferGenerator <output.swift> <input.swift>...
// Run by CofferPlugin on every build of a target that applies it.

let arguments = CommandLine.arguments.dropFirst()
guard let outputPath = arguments.first else {
    FileHandle.standardError.write(Data("usage: CofferGenerator <output.swift> <input.swift>...\n".utf8))
    exit(2)
}
var files: [SourceFile] = []
for path in arguments.dropFirst() {
    do {
        files.append(SourceFile(path: path, text: try String(contentsOfFile: path, encoding: .utf8)))
    } catch {
        FileHandle.standardError.write(Data("\(path):1:1: error: CofferGenerator cannot read this file: \(error)\n".utf8))
    }
}
let result = Generator.generate(files)
for diagnostic in result.diagnostics {
    FileHandle.standardError.write(Data("\(diagnostic)\n".utf8))
}
do {
    // Always written, even with errors: a missing or stale file would hide them.
    try result.code.write(toFile: outputPath, atomically: true, encoding: .utf8)
} catch {
    FileHandle.standardError.write(Data("error: CofferGenerator cannot write \(outputPath): \(error)\n".utf8))
    exit(1)
}
