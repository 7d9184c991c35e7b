import Foundation

/// How an entity's embedded values appear in its JSON objects (exports, `coffer query`,
/// `dump`, imports): as nested objects, although a record stores them flattened (a presence
/// field named like the value, `home`, and one field per leaf, `home.city`).
///
/// Rule: an embedded value is `"home":{"city":"Oslo","location":{"latitude":1.5}}` when its
/// presence field is `true`, `"home":null` otherwise; a leaf without a value is left out of
/// its object, as a top-level property is. An import reads that form, and still reads the
/// flattened one (`"home":true,"home.city":"Oslo"`); selectors name leaves by their dotted
/// paths either way.
struct EmbeddedNesting {
    /// Top-level catalog properties, in catalog order.
    private let topLevel: [CatalogProperty]
    /// The leaves of each embedded value (by its stored name), in catalog order.
    private let children: [String: [CatalogProperty]]
    /// Stored names of the presence fields of embedded values.
    private let presences: Set<String>

    /// Worked out once per export or query, not per object.
    init(_ entity: CatalogEntity) {
        let presences = Set(entity.properties.filter { PropertyFlags(rawValue: $0.flags).contains(.embedded) }.map(\.name))
        var children: [String: [CatalogProperty]] = [:]
        var topLevel: [CatalogProperty] = []
        var seen = Set<UInt16>()   // a damaged catalog may list one id twice: the first wins
        for property in entity.properties where seen.insert(property.id).inserted {
            if let parent = Self.parent(of: property.name, presences: presences) {
                children[parent, default: []].append(property)
            } else {
                topLevel.append(property)
            }
        }
        self.presences = presences
        self.children = children
        self.topLevel = topLevel
    }

    /// The innermost embedded value whose leaf `name` is (`home.location` for
    /// `home.location.latitude`), or nil for a top-level property.
    private static func parent(of name: String, presences: Set<String>) -> String? {
        var prefix = Substring(name)
        while let dot = prefix.lastIndex(of: ".") {
            prefix = prefix[..<dot]
            if presences.contains(String(prefix)) { return String(prefix) }
        }
        return nil
    }

    // MARK: Writing

    /// The members of a JSON object (`"name":value`, in catalog order) from each property's
    /// JSON texts by id (several for a damaged record that holds an id twice), embedded values
    /// nested. `fields`: only those stored names (an embedded value's name keeps its leaves).
    func members(texts: [UInt16: [String]], fields: Set<String>?) -> [String] {
        func isShown(_ name: String) -> Bool {
            guard let fields else { return true }
            if fields.contains(name) { return true }
            return Self.parent(of: name, presences: presences).map(isShown) ?? false
        }
        func hasShownLeaf(_ name: String) -> Bool {
            isShown(name) || (children[name] ?? []).contains { hasShownLeaf($0.name) }
        }
        func render(_ list: [CatalogProperty], prefix: String) -> [String] {
            var members: [String] = []
            for property in list {
                let key = FieldDescription.quoted(String(property.name.dropFirst(prefix.count)))
                if presences.contains(property.name) {
                    guard hasShownLeaf(property.name) else { continue }
                    if texts[property.id]?.last == "true" {
                        members.append(key + ":{" + render(children[property.name] ?? [], prefix: property.name + ".").joined(separator: ",") + "}")
                    } else {
                        members.append(key + ":null")
                    }
                } else if isShown(property.name) {
                    for text in texts[property.id] ?? [] { members.append(key + ":" + text) }
                }
            }
            return members
        }
        return render(topLevel, prefix: "")
    }

    // MARK: Reading

    /// The members of an import line with every nested embedded value flattened:
    /// `"home":{"city":"Oslo"}` becomes `"home":true,"home.city":"Oslo"`; `null`, `true`,
    /// `false` and flattened leaves are kept as they are.
    static func flattened(_ members: [JSONMember], schema: EntitySchema) -> [JSONMember] {
        let presences = Set(schema.properties.filter { $0.flags.contains(.embedded) }.map(\.storedName))
        guard !presences.isEmpty else { return members }
        func flatten(_ members: [JSONMember], prefix: String) -> [JSONMember] {
            var result: [JSONMember] = []
            for member in members {
                let name = prefix + member.key
                if presences.contains(name), case .object(let leaves) = member.value {
                    result.append(JSONMember(key: name, value: .bool(true)))
                    result += flatten(leaves, prefix: name + ".")
                } else {
                    result.append(JSONMember(key: name, value: member.value))
                }
            }
            return result
        }
        return flatten(members, prefix: "")
    }
}
