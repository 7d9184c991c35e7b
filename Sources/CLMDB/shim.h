#ifndef COFFER_CLMDB_SHIM_H
#define COFFER_CLMDB_SHIM_H
#include <lmdb.h>
#endif
