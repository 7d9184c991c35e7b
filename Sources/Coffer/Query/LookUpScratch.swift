/// Memory a transaction's remembered look-ups (`QueryExecutor.first`) reuse: the key of
/// each look-up is rebuilt here instead of in a new array. Stored inline in `Transaction`,
/// freed by `deallocate()` when the transaction goes.
struct LookUpScratch {
    /// The key of the current look-up.
    var key = IndexKeyBytes()

    /// Frees the memory; called once, when the transaction goes away.
    func deallocate() {
        key.deallocate()
    }
}
