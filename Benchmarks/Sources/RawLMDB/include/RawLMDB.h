#ifndef RAW_LMDB_H
#define RAW_LMDB_H
#include <stdint.h>

/// The benchmark workload against LMDB itself: append-ordered 8-byte big-endian keys, values
/// packed by hand, and a plain index database keyed `name ‖ id` for the string.
/// Every function returns a negative LMDB error code on failure.

int raw_open(const char *directory);
void raw_close(void);
/// Inserts objects 1...n in one transaction.
long raw_insert(long n);
/// Reads and unpacks every object; returns how many.
long raw_read_all(void);
/// Gets and unpacks the objects with the given ids in one read transaction; returns how many.
long raw_get_random(const uint64_t *ids, long count);
/// Finds each id's object through the name index; returns how many were found.
long raw_index_equality(const uint64_t *ids, long count);
/// Unpacks every object whose i32 is below `threshold`; returns how many.
long raw_scan_query(int32_t threshold);
/// Reads, changes and writes back every object in one transaction; returns how many.
long raw_update(void);
/// Removes objects 1...n one by one (with their index entries) in one transaction.
long raw_remove(long n);

/// Under valgrind's callgrind: writes the instructions counted since the last mark to a
/// dump labelled `label` and starts counting again (scripts/instructions.sh reads them).
/// Does nothing when not run under valgrind.
void bench_callgrind_mark(const char *label);

#endif
