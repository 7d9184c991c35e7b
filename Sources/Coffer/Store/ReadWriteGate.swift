import Foundation

/// A readers-writer lock that every transaction holds shared and map growth and `close()`
/// hold exclusively: LMDB can only change the map size while no transaction of the process
/// is open.
final class ReadWriteGate: @unchecked Sendable {
    private var lock = pthread_rwlock_t()

    init() { pthread_rwlock_init(&lock, nil) }
    deinit { pthread_rwlock_destroy(&lock) }

    func lockShared() { pthread_rwlock_rdlock(&lock) }
    func lockExclusive() { pthread_rwlock_wrlock(&lock) }
    func unlock() { pthread_rwlock_unlock(&lock) }
}
