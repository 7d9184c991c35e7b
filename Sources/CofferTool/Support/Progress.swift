import Foundation

/// A count of work done on standard error: one line rewritten in place on a terminal (at
/// most every 1,000 items), a plain line every 10,000 otherwise (a log keeps them), nothing
/// with `--quiet`. `finish()` prints the final count.
struct Progress {
    let verb: String
    let noun: String
    let quiet: Bool
    /// The number of items expected, when known ("1000 of 5000").
    var total: Int?
    private(set) var count = 0
    private var shown = 0
    private let isTerminal = isatty(STDERR_FILENO) != 0

    init(verb: String, noun: String, quiet: Bool, total: Int? = nil) {
        self.verb = verb
        self.noun = noun
        self.quiet = quiet
        self.total = total
    }

    /// One more item done.
    mutating func advance() {
        update(to: count + 1)
    }

    /// `done` items done so far.
    mutating func update(to done: Int) {
        count = done
        guard !quiet else { return }
        let step = isTerminal ? 1_000 : 10_000
        guard count / step > shown / step else { return }
        shown = count
        write((isTerminal ? "\r" : "") + "coffer: \(verb) \(amount)...\(isTerminal ? "" : "\n")")
    }

    func finish() {
        guard !quiet else { return }
        write((isTerminal ? "\r" : "") + "coffer: \(verb) \(amount)\n")
    }

    private var amount: String {
        let things = "\(noun)\(count == 1 && total == nil ? "" : "s")"
        return total.map { "\(count) of \($0) \(things)" } ?? "\(count) \(things)"
    }

    private func write(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }
}
