/// How large a change is on its way to the server, so pushers can cut batches by bytes
/// without encoding a change twice.
extension SyncChange {
    /// An upper bound of the bytes this change takes in a push batch (`coffer_push`'s JSON):
    /// its values' JSON text, each field's name twice (value and clock) and the fixed members
    /// (mid, entity, id, op, clocks). Summing the lengths costs nothing per value: a Swift
    /// string knows its UTF-8 length.
    ///
    /// ```swift
    /// let bytes = changes.reduce(0) { $0 + $1.wireSizeEstimate }
    /// if bytes > 4 << 20 { /* cut the batch here */ }
    /// ```
    @_spi(CofferSync)
    public var wireSizeEstimate: Int {
        // {"mid":…,"entity":"…","id":"<36>","hlc":"<20>","op":"upsert","create":false,"fields":{},"clocks":{}}
        var bytes = 160 + entity.utf8.count
        for field in fields {
            // "name":value, and "name":"<20 digits>", in the clocks; a name is escaped at most 6x.
            bytes += 2 * 6 * field.name.utf8.count + 32 + (field.json?.utf8.count ?? 4)
        }
        return bytes
    }
}
