import Foundation

/// Moves the process into a new temporary directory, so that the relative store paths of
/// the documentation ("books.coffer") land there; `leaveWorkplace()` removes it.
public func enterWorkplace(_ program: String) throws {
    let workplace = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-doc-\(program)-\(getpid())")
    try FileManager.default.createDirectory(at: workplace, withIntermediateDirectories: true)
    guard FileManager.default.changeCurrentDirectoryPath(workplace.path) else {
        throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: workplace.path])
    }
    currentProgram = program
    currentWorkplace = workplace
}

/// Removes the directory `enterWorkplace` made and says that every check passed.
public func leaveWorkplace() throws {
    if let currentWorkplace { try FileManager.default.removeItem(at: currentWorkplace) }
    currentWorkplace = nil
    print("\(currentProgram): all checks passed")
}

nonisolated(unsafe) private var currentProgram = "example"
nonisolated(unsafe) private var currentWorkplace: URL?

/// Exits with status 1 when `condition` is false or throws, naming what failed.
public func check(_ condition: @autoclosure () throws -> Bool, _ what: String) {
    let holds: Bool
    do { holds = try condition() } catch { holds = false; print("\(error)") }
    guard holds else {
        FileHandle.standardError.write(Data("\(currentProgram): check failed: \(what)\n".utf8))
        if let currentWorkplace { try? FileManager.default.removeItem(at: currentWorkplace) }   // failing anyway
        exit(1)
    }
}
