#include "RawLMDB.h"
#include <lmdb.h>
#include <stdio.h>
#include <string.h>

static MDB_env *env;
static MDB_dbi records, names;

/// The unpacked object, so reads do the work of producing usable values.
typedef struct {
    uint64_t id;
    char name[32];
    int32_t i32;
    int64_t i64;
    double d;
    float f;
    uint8_t b;
    uint8_t blob[16];
} Object;

static void be64(uint64_t value, unsigned char *out) {
    for (int i = 7; i >= 0; i--) { out[i] = value & 0xFF; value >>= 8; }
}

static uint64_t from_be64(const unsigned char *in) {
    uint64_t value = 0;
    for (int i = 0; i < 8; i++) value = (value << 8) | in[i];
    return value;
}

static int name_of(uint64_t id, char *out) { return sprintf(out, "user-%07llu", (unsigned long long)id); }

static void make(uint64_t id, Object *o) {
    o->id = id;
    name_of(id, o->name);
    o->i32 = (int32_t)(id % 1000);
    o->i64 = (int64_t)id * 1000003;
    o->d = (double)id * 0.5;
    o->f = (float)id;
    o->b = id % 2 == 0;
    for (int i = 0; i < 16; i++) o->blob[i] = (uint8_t)(id + i);
}

/// [u16 name length][name][i32][i64][double][float][u8][16 bytes]
static size_t pack(const Object *o, unsigned char *out) {
    uint16_t length = (uint16_t)strlen(o->name);
    unsigned char *p = out;
    memcpy(p, &length, 2); p += 2;
    memcpy(p, o->name, length); p += length;
    memcpy(p, &o->i32, 4); p += 4;
    memcpy(p, &o->i64, 8); p += 8;
    memcpy(p, &o->d, 8); p += 8;
    memcpy(p, &o->f, 4); p += 4;
    *p++ = o->b;
    memcpy(p, o->blob, 16); p += 16;
    return (size_t)(p - out);
}

static void unpack(uint64_t id, const unsigned char *p, Object *o) {
    uint16_t length;
    o->id = id;
    memcpy(&length, p, 2); p += 2;
    if (length > 31) length = 31;
    memcpy(o->name, p, length); o->name[length] = 0; p += length;
    memcpy(&o->i32, p, 4); p += 4;
    memcpy(&o->i64, p, 8); p += 8;
    memcpy(&o->d, p, 8); p += 8;
    memcpy(&o->f, p, 4); p += 4;
    o->b = *p++;
    memcpy(o->blob, p, 16);
}

int raw_open(const char *directory) {
    int rc = mdb_env_create(&env);
    if (rc) return -rc;
    mdb_env_set_maxdbs(env, 4);
    mdb_env_set_mapsize(env, (size_t)8 << 30);
    if ((rc = mdb_env_open(env, directory, MDB_NOTLS, 0644))) return -rc;
    MDB_txn *txn;
    if ((rc = mdb_txn_begin(env, NULL, 0, &txn))) return -rc;
    if ((rc = mdb_dbi_open(txn, "records", MDB_CREATE, &records))) return -rc;
    if ((rc = mdb_dbi_open(txn, "names", MDB_CREATE, &names))) return -rc;
    return -mdb_txn_commit(txn);
}

void raw_close(void) { mdb_env_close(env); }

static void index_key(const Object *o, unsigned char *key, size_t *size) {
    size_t length = strlen(o->name);
    memcpy(key, o->name, length);
    be64(o->id, key + length);
    *size = length + 8;
}

long raw_insert(long n) {
    MDB_txn *txn;
    int rc = mdb_txn_begin(env, NULL, 0, &txn);
    if (rc) return -rc;
    unsigned char keyBytes[8], value[128], indexBytes[64];
    Object o;
    for (long i = 1; i <= n; i++) {
        make((uint64_t)i, &o);
        be64((uint64_t)i, keyBytes);
        MDB_val key = {8, keyBytes}, data = {pack(&o, value), value};
        if ((rc = mdb_put(txn, records, &key, &data, MDB_APPEND))) { mdb_txn_abort(txn); return -rc; }
        size_t indexSize;
        index_key(&o, indexBytes, &indexSize);
        MDB_val indexKey = {indexSize, indexBytes}, empty = {0, NULL};
        // Names are zero-padded, so they too ascend with the id.
        if ((rc = mdb_put(txn, names, &indexKey, &empty, MDB_APPEND))) { mdb_txn_abort(txn); return -rc; }
    }
    rc = mdb_txn_commit(txn);
    return rc ? -rc : n;
}

long raw_read_all(void) {
    MDB_txn *txn;
    MDB_cursor *cursor;
    int rc = mdb_txn_begin(env, NULL, MDB_RDONLY, &txn);
    if (rc) return -rc;
    mdb_cursor_open(txn, records, &cursor);
    MDB_val key, data;
    long count = 0;
    volatile int64_t sink = 0;
    Object o;
    while (mdb_cursor_get(cursor, &key, &data, count ? MDB_NEXT : MDB_FIRST) == 0) {
        unpack(from_be64(key.mv_data), data.mv_data, &o);
        sink += o.i64;
        count++;
    }
    mdb_cursor_close(cursor);
    mdb_txn_abort(txn);
    return count;
}

long raw_get_random(const uint64_t *ids, long count) {
    MDB_txn *txn;
    int rc = mdb_txn_begin(env, NULL, MDB_RDONLY, &txn);
    if (rc) return -rc;
    long found = 0;
    unsigned char keyBytes[8];
    volatile int64_t sink = 0;
    Object o;
    for (long i = 0; i < count; i++) {
        be64(ids[i], keyBytes);
        MDB_val key = {8, keyBytes}, data;
        if (mdb_get(txn, records, &key, &data) == 0) {
            unpack(ids[i], data.mv_data, &o);
            sink += o.i64;
            found++;
        }
    }
    mdb_txn_abort(txn);
    return found;
}

long raw_index_equality(const uint64_t *ids, long count) {
    MDB_txn *txn;
    MDB_cursor *cursor;
    int rc = mdb_txn_begin(env, NULL, MDB_RDONLY, &txn);
    if (rc) return -rc;
    mdb_cursor_open(txn, names, &cursor);
    long found = 0;
    char name[32];
    unsigned char keyBytes[8];
    volatile int64_t sink = 0;
    Object o;
    for (long i = 0; i < count; i++) {
        int length = name_of(ids[i], name);
        MDB_val key = {(size_t)length, name}, data;
        if (mdb_cursor_get(cursor, &key, &data, MDB_SET_RANGE) != 0) continue;
        if (key.mv_size != (size_t)length + 8 || memcmp(key.mv_data, name, (size_t)length) != 0) continue;
        uint64_t id = from_be64((unsigned char *)key.mv_data + length);
        be64(id, keyBytes);
        MDB_val recordKey = {8, keyBytes}, record;
        if (mdb_get(txn, records, &recordKey, &record) == 0) {
            unpack(id, record.mv_data, &o);
            sink += o.i64;
            found++;
        }
    }
    mdb_cursor_close(cursor);
    mdb_txn_abort(txn);
    return found;
}

long raw_scan_query(int32_t threshold) {
    MDB_txn *txn;
    MDB_cursor *cursor;
    int rc = mdb_txn_begin(env, NULL, MDB_RDONLY, &txn);
    if (rc) return -rc;
    mdb_cursor_open(txn, records, &cursor);
    MDB_val key, data;
    long matches = 0;
    int first = 1;
    volatile int64_t sink = 0;
    Object o;
    while (mdb_cursor_get(cursor, &key, &data, first ? MDB_FIRST : MDB_NEXT) == 0) {
        first = 0;
        const unsigned char *p = data.mv_data;
        uint16_t length;
        memcpy(&length, p, 2);
        int32_t i32;
        memcpy(&i32, p + 2 + length, 4);
        if (i32 < threshold) {
            unpack(from_be64(key.mv_data), p, &o);
            sink += o.i64;
            matches++;
        }
    }
    mdb_cursor_close(cursor);
    mdb_txn_abort(txn);
    return matches;
}

long raw_update(void) {
    MDB_txn *txn;
    MDB_cursor *cursor;
    int rc = mdb_txn_begin(env, NULL, 0, &txn);
    if (rc) return -rc;
    mdb_cursor_open(txn, records, &cursor);
    MDB_val key, data;
    long count = 0;
    unsigned char value[128];
    Object o;
    while (mdb_cursor_get(cursor, &key, &data, count ? MDB_NEXT : MDB_FIRST) == 0) {
        unpack(from_be64(key.mv_data), data.mv_data, &o);
        o.i64 += 1;
        o.d += 1;
        MDB_val changed = {pack(&o, value), value};
        if ((rc = mdb_cursor_put(cursor, &key, &changed, MDB_CURRENT))) { mdb_txn_abort(txn); return -rc; }
        count++;
    }
    mdb_cursor_close(cursor);
    rc = mdb_txn_commit(txn);
    return rc ? -rc : count;
}

long raw_remove(long n) {
    MDB_txn *txn;
    int rc = mdb_txn_begin(env, NULL, 0, &txn);
    if (rc) return -rc;
    long removed = 0;
    unsigned char keyBytes[8], indexBytes[64];
    Object o;
    for (long i = 1; i <= n; i++) {
        be64((uint64_t)i, keyBytes);
        MDB_val key = {8, keyBytes}, data;
        if (mdb_get(txn, records, &key, &data) != 0) continue;
        unpack((uint64_t)i, data.mv_data, &o);
        size_t indexSize;
        index_key(&o, indexBytes, &indexSize);
        MDB_val indexKey = {indexSize, indexBytes};
        if ((rc = mdb_del(txn, names, &indexKey, NULL))) { mdb_txn_abort(txn); return -rc; }
        if ((rc = mdb_del(txn, records, &key, NULL))) { mdb_txn_abort(txn); return -rc; }
        removed++;
    }
    rc = mdb_txn_commit(txn);
    return rc ? -rc : removed;
}
