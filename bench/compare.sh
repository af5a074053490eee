#!/usr/bin/env bash
# Side-by-side throughput of redis-server and vessel-server on this machine.
#
# Both servers run at once, each pinned to its own core with taskset (vessel with one worker
# thread); redis-benchmark runs pinned to the *other* core of the server it measures. For every
# cell it prints both servers' requests per second, their ratio, and each server's CPU time per
# operation read from /proc/<pid>/stat before and after the cell (stable on a noisy machine).
#
#   bench/compare.sh                    # SET GET INCR MSET at -P 1 and -P 16, -c 50
#   TESTS="set,get" PIPELINES="1" bench/compare.sh
#   SECONDS_PER_CELL=3 bench/compare.sh
set -euo pipefail
cd "$(dirname "$0")/.."

VESSEL=${VESSEL:-build/bin/vessel-server}
TESTS=${TESTS:-set,get,incr,mset}
PIPELINES=${PIPELINES:-1 16}
CLIENTS=${CLIENTS:-50}
KEYSPACE=${KEYSPACE:-100000}
SECONDS_PER_CELL=${SECONDS_PER_CELL:-2}
REDIS_CORE=${REDIS_CORE:-0}
VESSEL_CORE=${VESSEL_CORE:-1}
REDIS_PORT=${REDIS_PORT:-7380}
VESSEL_PORT=${VESSEL_PORT:-7381}
EXTRA_LOAD=${EXTRA_LOAD:-}  # a script run against both servers before measuring (lists etc.)
VESSEL_ARGS=${VESSEL_ARGS:-}  # extra flags for vessel-server, e.g. --config FILE

[ -x "$VESSEL" ] || { echo "build first: $VESSEL not found" >&2; exit 1; }
tck=$(getconf CLK_TCK)

taskset -c "$REDIS_CORE" redis-server --port "$REDIS_PORT" --save '' --appendonly no \
  --daemonize no --logfile /dev/null & redis_pid=$!
taskset -c "$VESSEL_CORE" "$VESSEL" --port "$VESSEL_PORT" --threads 1 --log-level warn $VESSEL_ARGS &
vessel_pid=$!
trap 'kill $redis_pid $vessel_pid 2>/dev/null; wait 2>/dev/null' EXIT
for port in "$REDIS_PORT" "$VESSEL_PORT"; do
  for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.05; done
done
if [ -n "$EXTRA_LOAD" ]; then
  "$EXTRA_LOAD" "$REDIS_PORT"
  "$EXTRA_LOAD" "$VESSEL_PORT"
fi

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# run_cell PORT PID CORE TEST PIPELINE REQUESTS -> "rps cpu_us_per_op"
run_cell() {
  local port=$1 pid=$2 core=$3 test=$4 pipeline=$5 n=$6
  local before after rps
  before=$(cpu_ticks "$pid")
  rps=$(taskset -c "$core" redis-benchmark -p "$port" -t "$test" -n "$n" -c "$CLIENTS" \
          -P "$pipeline" -r "$KEYSPACE" --csv 2>/dev/null | awk -F'","' 'NR==2 {print $2}')
  after=$(cpu_ticks "$pid")
  awk -v r="$rps" -v d=$((after - before)) -v t="$tck" -v n="$n" \
    'BEGIN { printf "%.0f %.2f\n", r, d / t * 1e6 / n }'
}

printf '%-8s %3s %12s %12s %7s %14s %14s\n' test -P redis_rps vessel_rps ratio \
  redis_us/op vessel_us/op
IFS=',' read -ra tests <<<"$TESTS"
for test in "${tests[@]}"; do
  for p in $PIPELINES; do
    # Calibrate on redis so that each cell runs about SECONDS_PER_CELL seconds.
    probe=$(run_cell "$REDIS_PORT" "$redis_pid" "$VESSEL_CORE" "$test" "$p" 20000 | cut -d' ' -f1)
    n=$(( probe * SECONDS_PER_CELL ))
    [ "$n" -lt 20000 ] && n=20000
    read -r rr rc <<<"$(run_cell "$REDIS_PORT" "$redis_pid" "$VESSEL_CORE" "$test" "$p" "$n")"
    read -r vr vc <<<"$(run_cell "$VESSEL_PORT" "$vessel_pid" "$REDIS_CORE" "$test" "$p" "$n")"
    ratio=$(awk -v a="$vr" -v b="$rr" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')
    printf '%-8s %3s %12s %12s %7s %14s %14s\n' "$test" "$p" "$rr" "$vr" "$ratio" "$rc" "$vc"
  done
done
