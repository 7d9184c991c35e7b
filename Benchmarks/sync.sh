#!/usr/bin/env bash
# The sync benchmark against a private PostgreSQL cluster (Scripts/local-postgres.sh: a
# temporary directory, a free loopback port, the server's default durability), stopped and
# removed on exit, also on failure.
#
#   Benchmarks/sync.sh [coffer-sync-bench options: --count N --repeat R --samples S --json]
#
# Build first: (cd Benchmarks && swift build -c release -j 2 --product coffer-sync-bench).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bench="$here/.build/release/coffer-sync-bench"
[ -x "$bench" ] || { echo "build first: (cd Benchmarks && swift build -c release --product coffer-sync-bench)" >&2; exit 1; }
cluster=$(mktemp -d)
trap '"$here/../Scripts/local-postgres.sh" stop "$cluster"' EXIT
port=$("$here/../Scripts/local-postgres.sh" start "$cluster")
"$bench" --port "$port" --user postgres --database postgres "$@"
