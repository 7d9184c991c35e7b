#include "RawLMDB.h"

#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
void bench_callgrind_mark(const char *label) { CALLGRIND_DUMP_STATS_AT(label); }
#else
void bench_callgrind_mark(const char *label) { (void)label; }
#endif
