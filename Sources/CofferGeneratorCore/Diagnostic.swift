/// A build error the generator reports at a line of the user's source.
public struct Diagnostic: Equatable, Sendable, CustomStringConvertible {
    /// The source file's path as given to the generator.
    public let file: String
    /// 1-based line.
    public let line: Int
    /// 1-based column.
    public let column: Int
    /// What is wrong and how to fix it.
    public let message: String

    /// Creates a diagnostic.
    public init(file: String, line: Int, column: Int, message: String) {
        self.file = file
        self.line = line
        self.column = column
        self.message = message
    }

    /// `file:line:column: error: message`, the form compilers and IDEs recognise.
    public var description: String { "\(file):\(line):\(column): error: \(message)" }
}

/// One Swift source file given to the generator.
public struct SourceFile: Sendable {
    /// The path, used in diagnostics and `#sourceLocation`.
    public let path: String
    /// The file's text.
    public let text: String

    /// Creates a source file.
    public init(path: String, text: String) {
        self.path = path
        self.text = text
    }
}
