/// A table of a statement: a stored entity (from the catalog, so no generated code is
/// needed), the name columns use for it, and the columns the statement reads from it, each
/// in a slot of the statement's row.
final class SQLTable {
    /// A value the statement reads from each object of the table.
    enum Source: Equatable {
        case id
        /// A property's value (position in the catalog schema).
        case field(position: Int)
        /// A value inside a document property: `{Entity:settings.theme}`.
        case documentPath(position: Int, path: [String])
        /// The whole object as JSON (`{Entity:_soup}`).
        case soup
        /// The `@UpdatedAt` property in milliseconds since 1970 (`{Entity:_soupLastModifiedDate}`).
        case lastModified(position: Int)
    }

    struct Column {
        let source: Source
        let slot: Int
        let type: SQLType
        let name: String
    }

    /// Its place in the FROM clause (0 for the first table).
    let index: Int
    /// The name columns use: the alias, else the entity's name.
    let name: String
    let entity: CatalogEntity
    let schema: EntitySchema
    let isLeftJoined: Bool
    private(set) var columns: [Column] = []

    init(index: Int, name: String, entity: CatalogEntity, isLeftJoined: Bool) {
        self.index = index
        self.name = name
        self.entity = entity
        self.schema = EntitySchema(catalog: entity)
        self.isLeftJoined = isLeftJoined
    }

    /// The column reading `source`, added in the next free slot when new.
    func column(_ source: Source, type: SQLType, name: String, slots: inout Int) -> Column {
        if let known = columns.first(where: { $0.source == source }) { return known }
        let column = Column(source: source, slot: slots, type: type, name: name)
        slots += 1
        columns.append(column)
        return column
    }

    /// The id column (every table of a join reads it, so that a left join can tell a
    /// missing row from a row of NULLs).
    func idColumn(slots: inout Int) -> Column {
        column(.id, type: .integer, name: "id", slots: &slots)
    }

    /// The SQL type of a stored property's values.
    static func type(of property: PropertySchema) -> SQLType {
        switch property.type {
        case .bool, .int8, .int16, .int32, .int64, .int, .uint8, .uint16, .uint32, .uint64, .uint: return .integer
        case .float, .double, .date: return .real
        case .string, .uuid: return .text
        case .data: return .blob
        default: return .text   // arrays and documents: their JSON text
        }
    }

    /// The properties `*` selects: every stored property except relations and the markers
    /// of embedded values (their leaves are selected), in catalog order after the id.
    var starProperties: [Int] {
        schema.properties.indices.filter { position in
            let flags = schema.properties[position].flags
            return !flags.contains(.id) && !flags.contains(.toMany) && !flags.contains(.backlink) && !flags.contains(.embedded)
        }
    }
}
