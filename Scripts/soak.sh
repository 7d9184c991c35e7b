#!/usr/bin/env bash
# Long runs of the crash and concurrency tests that `swift test` runs briefly.
#   Scripts/soak.sh [crash-runs] [soak-seconds]
# The crash test kills a writing child process with SIGKILL `crash-runs` times (default 500)
# and checks after each kill that every reported commit is there, none is partial and the
# indexes agree with the records. The soak runs readers and writers for `soak-seconds`.
set -euo pipefail
cd "$(dirname "$0")/.."
swift build --build-tests -j 2
COFFER_CRASH_RUNS="${1:-500}" swift test --skip-build --filter killedWriterLosesNoCommitAndLeavesNoPartialTransaction
COFFER_SOAK_SECONDS="${2:-120}" swift test --skip-build --filter readersAndWritersKeepInvariants
