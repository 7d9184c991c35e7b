import Foundation

/// A readers-writer lock that every transaction holds shared and map growth and `close()`
/// hold exclusively: LMDB can only change the map size while no transaction of the process
/// is open.
///
/// Invariants: the lock lives at a fixed heap address for the gate's lifetime (pthread
/// objects must not move, and a class's stored property has no guaranteed stable address
/// when passed with `&`). It prefers writers: once an exclusive request waits, new shared
/// requests wait behind it, so a steady stream of reads cannot starve map growth (and every
/// writer waiting on it). The price: a thread must never request the gate shared while it
/// already holds it shared; transactions join the calling thread's open transaction instead
/// of taking the gate again.
final class ReadWriteGate: @unchecked Sendable {
    private let lock: UnsafeMutablePointer<pthread_rwlock_t>

    init() {
        lock = .allocate(capacity: 1)
        lock.initialize(to: pthread_rwlock_t())
        var attributes = pthread_rwlockattr_t()
        pthread_rwlockattr_init(&attributes)
        #if os(Linux)
        pthread_rwlockattr_setkind_np(&attributes, Int32(PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP))
        #endif
        let rc = pthread_rwlock_init(lock, &attributes)
        pthread_rwlockattr_destroy(&attributes)
        precondition(rc == 0, "pthread_rwlock_init failed: \(rc)")
    }

    deinit {
        pthread_rwlock_destroy(lock)
        lock.deallocate()
    }

    func lockShared() {
        let rc = pthread_rwlock_rdlock(lock)
        precondition(rc == 0, "pthread_rwlock_rdlock failed: \(rc)")
    }

    func lockExclusive() {
        let rc = pthread_rwlock_wrlock(lock)
        precondition(rc == 0, "pthread_rwlock_wrlock failed: \(rc)")
    }

    func unlock() {
        let rc = pthread_rwlock_unlock(lock)
        precondition(rc == 0, "pthread_rwlock_unlock failed: \(rc)")
    }
}
