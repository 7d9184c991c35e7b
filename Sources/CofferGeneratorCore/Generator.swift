/// The generator's entry point: sources in, one Swift file out.
///
/// ```swift
/// let result = Generator.generate([SourceFile(path: "Model.swift", text: source)])
/// print(result.code)                         // always a compilable file
/// result.diagnostics.forEach { print($0) }   // file:line:column: error: ...
/// ```
///
/// The generated file always exists: on errors it holds `#error` directives placed with
/// `#sourceLocation` at the offending lines, so the compiler reports them where they are.
public enum Generator {
    /// The generated code and the problems found.
    public struct Result: Sendable {
        /// The Swift file to compile.
        public let code: String
        /// Build errors at lines of the sources.
        public let diagnostics: [Diagnostic]
    }

    /// Analyses `files` and generates the code for every entity in them.
    public static func generate(_ files: [SourceFile]) -> Result {
        let analyzer = SourceAnalyzer(files: files)
        var emitter = CodeEmitter()
        emitter.knownEnums = Set(analyzer.enumRawTypes.keys)
        let code = emitter.emitFile(imports: analyzer.imports, entities: analyzer.entities, documentCodecs: analyzer.documentCodecs,
                                    diagnostics: analyzer.diagnostics)
        return Result(code: code, diagnostics: analyzer.diagnostics)
    }
}
