import Foundation

/// The full-text workload: documents of about 60 words drawn with a Zipf distribution
/// (s = 1) from a fixed vocabulary of 5,000 generated words, and five searches, the same for
/// Coffer and for SQLite FTS5 (both with the Porter stemmer).
struct TextWorkload {
    let count: Int
    let documents: [String]
    let vocabulary: [String]
    /// Search name -> FTS query syntax (Coffer's `matches` takes the same).
    let searches: [(name: String, query: String)]
    /// Each search runs at least this many times (and for at least a quarter of a second).
    let repetitions = 20

    static let syllables = ["ka", "lo", "mi", "ne", "su", "ta", "ri", "po", "da", "ve", "zu", "gi", "ho", "be", "fa", "ju"]

    init(count: Int) {
        self.count = count
        var generator = SeededGenerator(seed: 60)
        // 5,000 distinct words of two to four syllables (16 + 256 + 4096 + ... candidates).
        var words: [String] = []
        var seen = Set<String>()
        while words.count < 5_000 {
            let length = Int.random(in: 2...4, using: &generator)
            let word = (0..<length).map { _ in Self.syllables.randomElement(using: &generator)! }.joined()
            if seen.insert(word).inserted { words.append(word) }
        }
        vocabulary = words
        // Zipf: P(rank r) ∝ 1 / r.
        var cumulative: [Double] = []
        var total = 0.0
        for rank in 1...words.count {
            total += 1 / Double(rank)
            cumulative.append(total)
        }
        func draw() -> String {
            let target = Double.random(in: 0..<total, using: &generator)
            var low = 0
            var high = cumulative.count - 1
            while low < high {
                let middle = (low + high) / 2
                if cumulative[middle] < target { low = middle + 1 } else { high = middle }
            }
            return words[low]
        }
        documents = (0..<count).map { _ in (0..<Int.random(in: 50...70, using: &generator)).map { _ in draw() }.joined(separator: " ") }
        let prefix = String(words[40].prefix(4))
        searches = [
            ("rare term", words[3_000]),
            ("common term", words[2]),
            ("two terms", "\(words[10]) \(words[50])"),
            ("phrase", "\"\(words[0]) \(words[1])\""),
            ("prefix", "\(prefix)*"),
        ]
    }
}

/// What one contender measured on the text workload.
struct TextResult: Codable {
    /// Documents indexed per second (one transaction).
    var indexing: Double = 0
    /// Search name -> searches per second.
    var searchesPerSecond: [String: Double] = [:]
    /// Search name -> number of matching documents (must agree between contenders).
    var matches: [String: Int] = [:]
    /// Coffer only: a `contains` scan for the rare term, searches per second.
    var containsScan: Double?
}

/// Times `body` after one untimed warm-up run (the first run of a search pays for cold
/// pages and caches, in both contenders), repeating it at least `repetitions` times and for
/// at least a quarter of a second; returns runs per second and the last result's count.
func timeSearch(_ repetitions: Int, _ body: () throws -> Int) throws -> (Double, Int) {
    var found = try body()
    var runs = 0
    let start = DispatchTime.now().uptimeNanoseconds
    var elapsed: UInt64 = 0
    while runs < repetitions || elapsed < 250_000_000 {
        found = try body()
        runs += 1
        elapsed = DispatchTime.now().uptimeNanoseconds - start
    }
    return (Double(runs) / (Double(elapsed) / 1e9), found)
}
