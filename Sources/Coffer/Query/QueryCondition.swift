/// A condition on objects of `E`, built from `Property` operators and combined with `&&`,
/// `||` and `!`. Conditions are values: store them, combine them, reuse them.
///
/// ```swift
/// let adult = Person.age >= 18
/// let query = try people.query { adult && (Person.firstName.startsWith("S") || Person.rating > 4.5) }.build()
/// ```
///
/// `&&` binds tighter than `||`, as in Swift; parentheses group.
public struct QueryCondition<E: Entity>: Sendable {
    var node: ConditionNode

    init(_ node: ConditionNode) { self.node = node }

    init(_ position: Int, _ op: ConditionOp, _ values: [QueryValue] = [], caseSensitive: Bool = true) {
        node = .leaf(ConditionLeaf(position: position, op: op, values: values, caseSensitive: caseSensitive))
    }

    /// Both conditions.
    ///
    /// ```swift
    /// Person.age > 18 && Person.age < 65
    /// ```
    public static func && (lhs: QueryCondition, rhs: QueryCondition) -> QueryCondition {
        switch (lhs.node, rhs.node) {
        case (.and(let a), .and(let b)): return QueryCondition(.and(a + b))
        case (.and(let a), let b): return QueryCondition(.and(a + [b]))
        case (let a, .and(let b)): return QueryCondition(.and([a] + b))
        case (let a, let b): return QueryCondition(.and([a, b]))
        }
    }

    /// Either condition.
    ///
    /// ```swift
    /// Person.age < 18 || Person.age > 65
    /// ```
    public static func || (lhs: QueryCondition, rhs: QueryCondition) -> QueryCondition {
        switch (lhs.node, rhs.node) {
        case (.or(let a), .or(let b)): return QueryCondition(.or(a + b))
        case (.or(let a), let b): return QueryCondition(.or(a + [b]))
        case (let a, .or(let b)): return QueryCondition(.or([a] + b))
        case (let a, let b): return QueryCondition(.or([a, b]))
        }
    }

    /// The opposite condition.
    ///
    /// ```swift
    /// !(Person.age > 18)
    /// ```
    public static prefix func ! (condition: QueryCondition) -> QueryCondition {
        QueryCondition(.not(condition.node))
    }
}

precedencegroup QueryAliasPrecedence {
    higherThan: LogicalConjunctionPrecedence
    lowerThan: ComparisonPrecedence
}

/// Names a condition so that `setParameter("name", to:)` can change its value.
infix operator .= : QueryAliasPrecedence

/// Names the condition on the right: `"minAge" .= Person.age > 10`.
///
/// ```swift
/// var q = try people.query { "minAge" .= Person.age > 10 }.build()
/// try q.setParameter("minAge", to: 30)
/// ```
public func .= <E>(alias: String, condition: QueryCondition<E>) -> QueryCondition<E> {
    guard case .leaf(var leaf) = condition.node else {
        return QueryCondition(.invalid("alias \(alias) must name one property condition, not a combination"))
    }
    leaf.alias = alias
    return QueryCondition(.leaf(leaf))
}

/// The condition tree.
///
/// Leaves compare one property; `link` steps cross a relation and can sit anywhere in the
/// tree (under `||` and `!` too): each run resolves them, in its snapshot, into an in-list
/// condition on this entity (`resolvingLinks`) before planning and evaluation. A new kind of
/// step (a selector path, a text match over another entity) is a new `QueryLink`, not a
/// change to every switch.
indirect enum ConditionNode: Sendable {
    case leaf(ConditionLeaf)
    case link(LinkStep)
    case and([ConditionNode])
    case or([ConditionNode])
    case not(ConditionNode)
    /// A condition that could not be built; `build()` throws with this message.
    case invalid(String)

    /// A query's condition as built (`built`) with a look-up's current value in its one
    /// leaf when `position >= 0` (see `Query.lookUpPosition`), else `built` itself.
    static func withLookUpValue(_ built: ConditionNode?, position: Int, value: QueryValue) -> ConditionNode? {
        guard position >= 0, case .leaf(var leaf)? = built else { return built }
        leaf.values = [value]
        return .leaf(leaf)
    }

    /// Every leaf, depth first.
    var leaves: [ConditionLeaf] {
        switch self {
        case .leaf(let leaf): return [leaf]
        case .and(let nodes), .or(let nodes): return nodes.flatMap(\.leaves)
        case .not(let node): return node.leaves
        case .invalid, .link: return []
        }
    }

    /// Calls `body` with every leaf, depth first, without collecting them.
    func forEachLeaf(_ body: (ConditionLeaf) -> Void) {
        switch self {
        case .leaf(let leaf): body(leaf)
        case .and(let nodes), .or(let nodes): for node in nodes { node.forEachLeaf(body) }
        case .not(let node): node.forEachLeaf(body)
        case .invalid, .link: break
        }
    }

    /// Whether the tree holds link steps.
    var hasLinks: Bool {
        switch self {
        case .link: return true
        case .leaf, .invalid: return false
        case .and(let nodes), .or(let nodes): return nodes.contains(where: \.hasLinks)
        case .not(let node): return node.hasLinks
        }
    }

    /// `condition` with each link step, wherever it sits in the tree, resolved to a
    /// condition on its entity in `transaction`'s snapshot.
    static func effective(_ condition: ConditionNode?, in transaction: Transaction, store: Store) throws -> ConditionNode? {
        guard let condition, condition.hasLinks else { return condition }
        return try condition.resolvingLinks { try $0.condition(in: transaction, store: store) }
    }

    /// The tree with every link step replaced by the condition `resolve` gives for it.
    func resolvingLinks(_ resolve: (any QueryLink) throws -> ConditionNode) rethrows -> ConditionNode {
        switch self {
        case .link(let step): return try resolve(step.link)
        case .leaf, .invalid: return self
        case .and(let nodes): return .and(try nodes.map { try $0.resolvingLinks(resolve) })
        case .or(let nodes): return .or(try nodes.map { try $0.resolvingLinks(resolve) })
        case .not(let node): return .not(try node.resolvingLinks(resolve))
        }
    }

    /// Rewrites every leaf with `transform`.
    func mapLeaves(_ transform: (ConditionLeaf) throws -> ConditionLeaf) rethrows -> ConditionNode {
        switch self {
        case .leaf(let leaf): return .leaf(try transform(leaf))
        case .and(let nodes): return .and(try nodes.map { try $0.mapLeaves(transform) })
        case .or(let nodes): return .or(try nodes.map { try $0.mapLeaves(transform) })
        case .not(let node): return .not(try node.mapLeaves(transform))
        case .invalid, .link: return self
        }
    }

    /// The first link step's precise build error (a malformed full-text search).
    var firstBuildError: CofferError? {
        switch self {
        case .link(let step): return step.link.buildError
        case .leaf, .invalid: return nil
        case .and(let nodes), .or(let nodes): return nodes.lazy.compactMap(\.firstBuildError).first
        case .not(let node): return node.firstBuildError
        }
    }

    var firstInvalid: String? {
        switch self {
        case .invalid(let message): return message
        case .leaf: return nil
        case .link(let step): return step.link.invalid
        case .and(let nodes), .or(let nodes): return nodes.lazy.compactMap(\.firstInvalid).first
        case .not(let node): return node.firstInvalid
        }
    }
}

/// A relation step inside a condition tree.
struct LinkStep: Sendable {
    let link: any QueryLink
}

/// One comparison of one property.
struct ConditionLeaf: Sendable {
    var position: Int
    var op: ConditionOp
    var values: [QueryValue]
    var caseSensitive: Bool
    var alias: String?
    /// For an id list: the ids come from an index that changes with the table in the same
    /// transaction (a full-text match), so each names a stored object, and a query that
    /// needs only ids need not read the records.
    var idsAreStored = false
    /// For a document property (``JSONValue``, dictionaries): the object keys leading to the
    /// value the condition tests (`metadata["first"]["second"]`); empty otherwise.
    var path: [String] = []

    init(position: Int, op: ConditionOp, values: [QueryValue], caseSensitive: Bool) {
        self.position = position
        self.op = op
        self.values = values
        self.caseSensitive = caseSensitive
    }
}

/// A comparison operator.
enum Comparison: String, Sendable {
    case equal = "==", notEqual = "!=", less = "<", greater = ">", lessOrEqual = "<=", greaterOrEqual = ">="

    func holds(_ order: Int) -> Bool {
        switch self {
        case .equal: return order == 0
        case .notEqual: return order != 0
        case .less: return order < 0
        case .greater: return order > 0
        case .lessOrEqual: return order <= 0
        case .greaterOrEqual: return order >= 0
        }
    }
}

/// What a leaf checks. The number of values each takes is fixed by ``arity``.
enum ConditionOp: Sendable {
    case compare(Comparison)
    case between(lowerInclusive: Bool, upperInclusive: Bool)
    case inList
    case notInList
    case isNil
    case isNotNil
    case startsWith
    case endsWith
    case contains
    case like
    case equalWithTolerance(Double)
    case containsElement
    case count(Comparison)
    case modulo(Int64, Comparison)
    /// The string has a match of the regular expression anywhere (selector `$regex`).
    case regex(RegexPattern)
    /// One element of the array satisfies every comparison, each with the value at its
    /// place in the leaf's values (selector `$elemMatch`).
    case elementMatch([Comparison])

    enum Arity { case none, one, two, list }

    /// Whether the operator compares the property with values of the property's own type
    /// (so values of that type always fit it).
    var takesValuesOfPropertyType: Bool {
        switch self {
        case .compare, .between, .inList, .notInList, .isNil, .isNotNil: return true
        default: return false
        }
    }

    var arity: Arity {
        switch self {
        case .isNil, .isNotNil: return .none
        case .between: return .two
        case .inList, .notInList, .elementMatch: return .list
        case .regex: return .none
        default: return .one
        }
    }
}
