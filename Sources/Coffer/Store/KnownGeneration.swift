/// A catalog generation and the committed LMDB transaction it was read in: every
/// transaction starting from that committed state has that generation (see
/// `Store.catalogGeneration(of:known:)`).
struct KnownGeneration {
    /// The id of the committed transaction (`mdb_txn_id` of a read of that state).
    let committed: Int
    let generation: UInt64
}
