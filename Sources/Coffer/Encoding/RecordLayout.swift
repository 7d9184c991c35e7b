/// How one entity's records map to the schema positions generated code uses: the stable
/// property id stored for each position, the position of each stored id, and the names
/// error messages use. Everything the encoding layer needs to read and write an entity's
/// records, and nothing of the store the entity is bound to.
///
/// The schema layer's `EntityBinding` is a `RecordLayout` (a subclass, so a reader reaches
/// the tables with no extra indirection); readers and record views hold it unretained.
///
/// Invariants: `storedIds` and `tagBases` hold one entry per schema position (at least one),
/// `positionsByStoredId` holds `positionCount` entries; every position `p` with a stored id
/// `s < positionCount` has `positionsByStoredId[s] == p`, and every other entry is -1. The
/// tables are filled by the subclass's initializer and read-only afterwards.
class RecordLayout: @unchecked Sendable {
    /// The entity's name, for messages.
    let entityName: String
    /// The name of the property at each schema position, for messages.
    let propertyNames: [String]
    /// Stored property id for each schema position (`id`'s slot is unused).
    let storedIds: UnsafeMutablePointer<UInt16>
    /// For each schema position, the format 2 tag of its property without the kind bits
    /// (`storedId << 5`), or `1 << 16` for an id that needs the escape: no two-byte tag equals
    /// that with any kind added, so the straight path leaves such fields to the general one.
    let tagBases: UnsafeMutablePointer<UInt32>
    /// Schema position for each stored property id, -1 for ids the schema does not have.
    let positionsByStoredId: UnsafeMutablePointer<Int16>
    let positionCount: Int

    /// A layout with no property mapped yet, for stored ids below `positionCount`; the
    /// subclass maps each position with `map(_:to:)`.
    init(entityName: String, propertyNames: [String], positionCount: Int) {
        self.entityName = entityName
        self.propertyNames = propertyNames
        let slots = max(propertyNames.count, 1)
        storedIds = .allocate(capacity: slots)
        storedIds.initialize(repeating: 0, count: slots)
        tagBases = .allocate(capacity: slots)
        tagBases.initialize(repeating: 1 << 16, count: slots)
        self.positionCount = positionCount
        positionsByStoredId = .allocate(capacity: positionCount)
        positionsByStoredId.initialize(repeating: -1, count: positionCount)
    }

    deinit {
        storedIds.deallocate()
        tagBases.deallocate()
        positionsByStoredId.deallocate()
    }

    /// Maps schema `position` to stored property id `storedId`.
    final func map(_ position: Int, to storedId: UInt16) {
        storedIds[position] = storedId
        tagBases[position] = Int(storedId) < escapedPropertyId ? UInt32(storedId) << 5 : 1 << 16
        // The caller guarantees the bound (`CatalogEntity.validate`); checked again because it
        // guards a write.
        if Int(storedId) < positionCount { positionsByStoredId[Int(storedId)] = Int16(position) }
    }

    /// Whether the layout maps the property stored under `storedId` (the running build
    /// declares it).
    @inline(__always)
    final func declares(_ storedId: UInt16) -> Bool {
        Int(storedId) < positionCount && positionsByStoredId[Int(storedId)] >= 0
    }

    /// The name of the property at `position`, or `#position` when there is none.
    final func propertyName(_ position: Int) -> String {
        propertyNames.indices.contains(position) ? propertyNames[position] : "#\(position)"
    }
}
