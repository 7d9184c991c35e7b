#!/usr/bin/env bash
# The gateway load test (Tests/CofferSyncTests/GatewayLoadTests.swift) at a measured size:
# devices with tokens, each a replica subscribed to its room (ten members each, row-level
# security by membership), all in one process with one coffer-gateway and the private
# PostgreSQL cluster the tests start, writing posts at random moments for a time window.
# Prints the initial sync time, deliveries per second and the latency of a change to the
# other members of its room (p50, p99, max), and checks that every replica converged to
# exactly its room. The suite runs it with 8 devices; this runs it at the size given.
#
#   Benchmarks/gateway-load.sh [devices (1000)] [posts per device (2)] [window in seconds (20)] [swift test options]
#
# COFFER_GATEWAY_LOAD_POLL sets the replicas' longest poll in seconds, the interval of their
# safety-net pass (the suite's 5 unless given; the replicas' default is 60): at 1,000 devices
# a 5-second one alone is 200 pulling passes a second.
#
# Debug by default (the suite's build); add `-c release -Xswiftc -enable-testing` for a
# release build (15 to 25 minutes the first time).
set -euo pipefail
cd "$(dirname "$0")/.."
devices=${1:-1000}
posts=${2:-2}
seconds=${3:-20}
shift $(( $# < 3 ? $# : 3 ))
COFFER_GATEWAY_LOAD=$devices COFFER_GATEWAY_LOAD_POSTS=$posts COFFER_GATEWAY_LOAD_SECONDS=$seconds \
    COFFER_GATEWAY_LOAD_POLL=${COFFER_GATEWAY_LOAD_POLL:-} \
    swift test -j 2 --filter GatewayLoadTests "$@" 2>&1 | grep -E "gateway load|initial sync|deliveries|latency|passed|failed|Expectation"
