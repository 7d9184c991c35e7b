/// Reading a document from an import's JSON text: the JSON parser's nodes become document
/// nodes. Here, beside the import, so that the document codec does not depend on the parser.
extension DocumentCodec {
    /// The node of a document's JSON text as ``json(_:tagged:)`` writes it (an import):
    /// integers kept exact (`UInt64` values above `Int64.max` too), tags read back. Any other
    /// object with one member named `$number` or `$object` is refused, so no text reads two ways.
    static func node(json: JSONNode, tagged: Bool) throws(ImportProblem) -> Node {
        switch json {
        case .null: return .null
        case .bool(let flag): return .scalar(.bool(flag))
        case .number(let number):
            if let integer = Int64(number.text) { return .scalar(.integer(integer)) }
            if let integer = UInt64(number.text) { return .scalar(.unsigned(integer)) }
            return .scalar(.double(number.double))
        case .string(let text): return .scalar(.string(text))
        case .array(let elements):
            var nodes: [Node] = []
            nodes.reserveCapacity(elements.count)
            for element in elements { nodes.append(try node(json: element, tagged: tagged)) }
            return .array(nodes)
        case .object(let members):
            if tagged, members.count == 1, let member = members.first {
                if member.key == numberTag {
                    guard case .string(let text) = member.value, let number = nonFinite(text) else {
                        throw ImportProblem("{\"\(numberTag)\": ...} takes \"nan\", \"inf\", \"-inf\" or \"-0\", not \(member.value.text) (an object with this one member is written {\"\(objectTag)\": {...}})")
                    }
                    return .scalar(.double(number))
                }
                if member.key == objectTag {
                    guard case .object(let wrapped) = member.value else {
                        throw ImportProblem("{\"\(objectTag)\": ...} takes an object, not \(member.value.text)")
                    }
                    return try object(wrapped, tagged: tagged)
                }
            }
            return try object(members, tagged: tagged)
        }
    }

    private static func object(_ members: [JSONMember], tagged: Bool) throws(ImportProblem) -> Node {
        var result: [String: Node] = [:]
        for member in members {
            guard result.updateValue(try node(json: member.value, tagged: tagged), forKey: member.key) == nil else {
                // A key given twice would silently lose a value.
                throw ImportProblem("a document without repeated keys (\(FieldDescription.quoted(member.key)) is given twice)")
            }
        }
        return .object(result)
    }
}
