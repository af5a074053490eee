#!/usr/bin/env bash
# Pub/sub fan-out: one publisher, SUBSCRIBERS subscribers of one channel, SIZE-byte messages.
# For redis-server, vessel with one worker and vessel with two workers (the subscribers spread
# over both by SO_REUSEPORT), prints the messages delivered per second and the server's CPU time
# per delivered message (from /proc/<pid>/stat, stable on a noisy machine). The load generator
# (bench/pubsub_load.cc) keeps WINDOW PUBLISHes in flight and reads the subscribers with READERS
# threads, pinned to LOAD_CORES; the servers are pinned to SERVER_CORES.
#
#   bench/pubsub.sh                                # 100 subscribers, 64-byte messages, 5 s
#   SUBSCRIBERS=1000 SIZE=512 SECONDS_PER_CELL=10 bench/pubsub.sh
set -euo pipefail
cd "$(dirname "$0")/.."

VESSEL=${VESSEL:-build/bin/vessel-server}
LOAD=${LOAD:-build/bin/pubsub_load}
SUBSCRIBERS=${SUBSCRIBERS:-100}
SIZE=${SIZE:-64}
WINDOW=${WINDOW:-64}
READERS=${READERS:-1}
SECONDS_PER_CELL=${SECONDS_PER_CELL:-5}
SERVER_CORES=${SERVER_CORES:-0}
SERVER_CORES_2=${SERVER_CORES_2:-0,1}
LOAD_CORES=${LOAD_CORES:-1}
PORT=${PORT:-7390}

for f in "$VESSEL" "$LOAD"; do
  [ -x "$f" ] || { echo "build first: $f not found (cmake --build build --target vessel-server pubsub_load)" >&2; exit 1; }
done
if redis-cli -p "$PORT" ping >/dev/null 2>&1; then
  echo "port $PORT is already in use: stop that server or set PORT" >&2
  exit 1
fi
tck=$(getconf CLK_TCK)
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
server_pid=
trap '[ -n "$server_pid" ] && kill $server_pid 2>/dev/null; wait 2>/dev/null' EXIT

# cell LABEL CORES COMMAND...: starts the server, runs the load, prints one row.
cell() {
  local label=$1 cores=$2
  shift 2
  taskset -c "$cores" "$@" >/dev/null 2>&1 &
  server_pid=$!
  for _ in $(seq 100); do redis-cli -p "$PORT" ping >/dev/null 2>&1 && break; sleep 0.05; done
  local before after out
  before=$(cpu_ticks "$server_pid")
  out=$(taskset -c "$LOAD_CORES" "$LOAD" --port "$PORT" --subscribers "$SUBSCRIBERS" \
          --size "$SIZE" --seconds "$SECONDS_PER_CELL" --window "$WINDOW" --readers "$READERS")
  after=$(cpu_ticks "$server_pid")
  kill "$server_pid"
  wait "$server_pid" 2>/dev/null || true
  server_pid=
  echo "$out" | awk -v label="$label" -v d=$((after - before)) -v t="$tck" '{
    for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
    printf "%-18s %14.0f %16.3f %12d %10d\n", label, v["delivered_per_sec"],
      d / t * 1e9 / (v["delivered"] > 0 ? v["delivered"] : 1), v["delivered"], v["lost"]
  }'
}

echo "fan-out: $SUBSCRIBERS subscribers, $SIZE-byte messages, window $WINDOW, $SECONDS_PER_CELL s"
printf '%-18s %14s %16s %12s %10s\n' server delivered/s cpu_ns/delivered delivered lost
cell redis "$SERVER_CORES" redis-server --port "$PORT" --save '' --appendonly no \
  --logfile /dev/null
cell "vessel 1 worker" "$SERVER_CORES" "$VESSEL" --port "$PORT" --save "" --threads 1 --log-level warn
cell "vessel 2 workers" "$SERVER_CORES_2" "$VESSEL" --port "$PORT" --save "" --threads 2 --log-level warn
