/// A class of scalars: ranges and named classes (each possibly negated), the whole
/// possibly negated.
struct ScalarSet: Sendable {
    enum Class: Sendable, Equatable {
        case digit, word, space
        case alpha, alnum, upper, lower, punct, xdigit, cntrl, print, graph, blank
        case category(Set<Unicode.GeneralCategory>)

        static func posix(_ name: String) -> Class? {
            switch name {
            case "alpha": return .alpha
            case "digit": return .digit
            case "alnum": return .alnum
            case "upper": return .upper
            case "lower": return .lower
            case "space": return .space
            case "punct": return .punct
            case "xdigit": return .xdigit
            case "cntrl": return .cntrl
            case "print": return .print
            case "graph": return .graph
            case "blank": return .blank
            case "word": return .word
            default: return nil
            }
        }

        func contains(_ scalar: Unicode.Scalar) -> Bool {
            let properties = scalar.properties
            switch self {
            case .digit: return properties.generalCategory == .decimalNumber
            case .word: return ScalarSet.isWord(scalar)
            case .space: return properties.isWhitespace
            case .alpha: return properties.isAlphabetic
            case .alnum: return properties.isAlphabetic || properties.generalCategory == .decimalNumber
            case .upper: return properties.isUppercase
            case .lower: return properties.isLowercase
            case .punct: return ScalarSet.punctuation.contains(properties.generalCategory)
            case .xdigit: return properties.isASCIIHexDigit
            case .cntrl: return properties.generalCategory == .control
            case .blank: return scalar == " " || scalar == "\t"
            case .graph, .print:
                let category = properties.generalCategory
                if self == .print, properties.isWhitespace, category != .control { return true }
                return !properties.isWhitespace && ![.control, .format, .surrogate, .unassigned, .privateUse].contains(category)
            case .category(let categories): return categories.contains(properties.generalCategory)
            }
        }
    }

    var ranges: [ClosedRange<UInt32>] = []
    var classes: [(Class, negated: Bool)] = []
    var negated = false

    init(classes: [(Class, negated: Bool)] = []) {
        self.classes = classes
    }

    /// Whether `scalar` is in the class; `fold`: its other case counts too.
    func contains(_ scalar: Unicode.Scalar, fold: Bool) -> Bool {
        var found = containsExactly(scalar)
        if !found, fold {
            let lower = RegexPattern.fold(scalar)
            let upper = scalar.properties.uppercaseMapping.unicodeScalars
            found = containsExactly(lower) || (upper.count == 1 && upper.first.map(containsExactly) == true)
        }
        return found != negated
    }

    private func containsExactly(_ scalar: Unicode.Scalar) -> Bool {
        ranges.contains { $0.contains(scalar.value) } || classes.contains { $0.0.contains(scalar) != $0.negated }
    }

    /// Letters, marks, decimal digits and connector punctuation (`_`): what `\w` and `\b` see.
    static func isWord(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
             .nonspacingMark, .spacingMark, .enclosingMark, .decimalNumber, .connectorPunctuation:
            return true
        default:
            return false
        }
    }

    static let punctuation: Set<Unicode.GeneralCategory> = [.connectorPunctuation, .dashPunctuation, .openPunctuation,
                                                             .closePunctuation, .initialPunctuation, .finalPunctuation, .otherPunctuation]

    /// The general categories a `\p{...}` name stands for.
    static func categories(named name: String) -> Set<Unicode.GeneralCategory>? {
        switch name {
        case "L", "Letter": return [.uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter]
        case "Lu": return [.uppercaseLetter]
        case "Ll": return [.lowercaseLetter]
        case "Lt": return [.titlecaseLetter]
        case "Lm": return [.modifierLetter]
        case "Lo": return [.otherLetter]
        case "M", "Mark": return [.nonspacingMark, .spacingMark, .enclosingMark]
        case "Mn": return [.nonspacingMark]
        case "N", "Number": return [.decimalNumber, .letterNumber, .otherNumber]
        case "Nd": return [.decimalNumber]
        case "Nl": return [.letterNumber]
        case "No": return [.otherNumber]
        case "P", "Punctuation": return punctuation
        case "S", "Symbol": return [.mathSymbol, .currencySymbol, .modifierSymbol, .otherSymbol]
        case "Sm": return [.mathSymbol]
        case "Sc": return [.currencySymbol]
        case "Z", "Separator": return [.spaceSeparator, .lineSeparator, .paragraphSeparator]
        case "Zs": return [.spaceSeparator]
        case "C", "Other": return [.control, .format, .surrogate, .privateUse, .unassigned]
        case "Cc": return [.control]
        default: return nil
        }
    }
}
