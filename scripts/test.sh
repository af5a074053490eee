#!/usr/bin/env bash
# The whole test suite, as CI runs it (`make test`): installs what is missing, then builds and
# tests four configurations of the tree:
#   release   every test: unit, commands (differential against redis-server), sdk, clients
#   asan      ASan + UBSan, system allocator: unit, command, SDK and cluster tests
#   tsan      ThreadSanitizer, system allocator: the tests labelled tsan (VESSEL_TSAN_TESTS in
#             tests/CMakeLists.txt: the concurrency tests and the cross-worker command tests)
#   fuzz      clang + libFuzzer: RESP parser, HLL, BITFIELD, ACL rules, RDB loader, DUMP payloads,
#             Lua scripts, the stream RDB decoder, the container types' decoders (deque, omap, bag,
#             multimap), the cluster bus decoder
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh test

jobs=$(nproc)
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}
# Every configure step sets the options the tests depend on: a tree configured by `make run`
# (VESSEL_TESTS=OFF in the cache) must still build and run every test, and a ctest call that
# finds no tests fails instead of passing.

# Each step line shows the seconds since the suite started (after deps.sh): the last one, "all
# tests passed (Ns)", is the suite's total wall time.
started=$(date +%s)
step() { printf '\n== %s (%ss)\n' "$*" "$(( $(date +%s) - started ))"; }

step "release: build"
cmake --preset release -DVESSEL_TESTS=ON -DVESSEL_BENCH=ON >/dev/null
cmake --build --preset release -j "$jobs"
step "release: all tests"
ctest --no-tests=error --test-dir build --output-on-failure -j "$jobs" -LE 'stress|fuzz'

step "asan+ubsan: build"
cmake --preset asan -DVESSEL_TESTS=ON >/dev/null
cmake --build --preset asan -j "$jobs"
step "asan+ubsan: unit, command, sdk and cluster tests"
ctest --no-tests=error --test-dir build-asan --output-on-failure -j "$jobs" -L 'unit|commands|sdk|cluster'

step "tsan: build"
cmake --preset tsan -DVESSEL_TESTS=ON >/dev/null
cmake --build --preset tsan -j "$jobs" --target vessel_tsan_tests
step "tsan: concurrency tests"
ctest --no-tests=error --test-dir build-tsan --output-on-failure -L tsan

step "fuzz: build"
cmake --preset fuzz -DVESSEL_TESTS=ON >/dev/null
cmake --build --preset fuzz -j "$jobs" --target resp_parser_fuzz hll_fuzz bitfield_fuzz acl_rules_fuzz \
  rdb_load_fuzz dump_payload_fuzz script_fuzz stream_rdb_fuzz deque_fuzz omap_fuzz bag_fuzz \
  multimap_fuzz cluster_bus_fuzz
step "fuzz: RESP parser, HyperLogLog decoder, BITFIELD parser, ACL rules, RDB loader, DUMP payloads, Lua scripts, stream RDB decoder, container decoders, cluster bus"
ctest --no-tests=error --test-dir build-fuzz --output-on-failure -L fuzz -j "$jobs"

step "all tests passed"
