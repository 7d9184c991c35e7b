extension RegexPattern {
    /// Emits the program of a node.
    struct Compiler {
        var program: [Instruction] = []
        /// Nodes emitted so far: repetitions of a body that emits nothing (`(){1000}`) add no
        /// instruction, so the program's size alone would not bound the compile's work.
        var emitted = 0

        mutating func append(_ instruction: Instruction) throws {
            // Repetitions copy their body: the cap bounds both compile and match work.
            guard program.count < RegexPattern.maximumProgramSize else {
                throw SyntaxError(reason: "the pattern is too large once its repetitions are expanded (more than \(RegexPattern.maximumProgramSize) steps)", offset: 0)
            }
            program.append(instruction)
        }

        mutating func emit(_ node: Node) throws {
            emitted += 1
            guard emitted <= 4 * RegexPattern.maximumProgramSize else {
                throw SyntaxError(reason: "the pattern is too large once its repetitions are expanded (more than \(RegexPattern.maximumProgramSize) steps)", offset: 0)
            }
            switch node {
            case .empty: break
            case .scalar(let scalar, let fold): try append(.scalar(scalar, fold: fold))
            case .any(let dotAll): try append(.any(dotAll: dotAll))
            case .set(let index, let fold): try append(.set(index, fold: fold))
            case .assert(let assertion): try append(.assert(assertion))
            case .sequence(let items): for item in items { try emit(item) }
            case .alternatives(let branches):
                var jumps: [Int] = []
                for (offset, branch) in branches.enumerated() {
                    if offset < branches.count - 1 {
                        let split = program.count
                        try append(.split(split + 1, 0))
                        try emit(branch)
                        jumps.append(program.count)
                        try append(.jump(0))
                        program[split] = .split(split + 1, program.count)
                    } else {
                        try emit(branch)
                    }
                }
                for jump in jumps { program[jump] = .jump(program.count) }
            case .repetition(let body, let min, let max):
                for _ in 0..<min { try emit(body) }
                if let max {
                    // Each optional copy may skip to the end.
                    var splits: [Int] = []
                    for _ in min..<max {
                        splits.append(program.count)
                        try append(.split(0, 0))
                        try emit(body)
                    }
                    for split in splits { program[split] = .split(split + 1, program.count) }
                } else {
                    let loop = program.count
                    try append(.split(loop + 1, 0))
                    try emit(body)
                    try append(.jump(loop))
                    program[loop] = .split(loop + 1, program.count)
                }
            }
        }
    }
}
