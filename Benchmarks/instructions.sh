#!/usr/bin/env bash
# Instructions per object for every operation of the benchmark, counted by valgrind's
# callgrind (repeatable on a noisy machine, unlike time). coffer-bench marks the start and
# end of each operation (bench_callgrind_mark); this script runs one contender at a time under
# callgrind and divides each operation's instructions by its object count.
#
#   Benchmarks/instructions.sh [COUNT] [CONTENDER...]     (default: 20000 coffer lmdb)
#   (coffer-plain and coffer-synced: the same writes on the same entity without and with @Sync,
#    in bulk and one object per transaction, for the write cost of sync)
#
# Build first: (cd Benchmarks && swift build -c release -j 2). Valgrind cannot read Swift
# 6.3's DWARF 5, so the binary is copied and stripped of debug information.
set -euo pipefail
count=${1:-20000}
shift || true
contenders=("$@")
[ ${#contenders[@]} -eq 0 ] && contenders=(coffer lmdb)
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
# KEEP=1 keeps the dumps (for callgrind_annotate) and prints where they are.
if [ "${KEEP:-0}" = 1 ]; then echo "dumps in $work"; else trap 'rm -rf "$work"' EXIT; fi
cp "$here/.build/release/coffer-bench" "$work/bench"
objcopy --strip-debug "$work/bench"
for contender in "${contenders[@]}"; do
    valgrind --tool=callgrind --callgrind-out-file="$work/$contender.out" \
        "$work/bench" --contender "$contender" --count "$count" --directory "$work/$contender-db" \
        > "$work/$contender.json" 2> "$work/$contender.log" || { cat "$work/$contender.log"; exit 1; }
    echo "$contender, $count objects: instructions per object"
    dumps=$(ls -v "$work/$contender.out".*)
    for dump in $dumps; do
        awk '/^desc: Trigger: Client Request: / { label = substr($0, index($0, "Request: ") + 9) }
             /^summary: / { total = $2 }
             END { split(label, part, " "); if (part[1] != "setup" && part[2] > 0)
                       printf "  %-14s %10.0f\n", part[1], total / part[2] }' "$dump"
    done
done
