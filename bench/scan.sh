#!/usr/bin/env bash
# The scan workload: 1,000 lists of 10,000 elements each on both servers, then
# `LPOS key:__rand_int__ <absent>` (every call walks a whole list) at -c 1, 4 and 16 with -P 16.
# CPU-heavy, tiny replies: this is where executing commands on every core pays off. redis-server
# runs one thread; vessel runs one worker per core; neither is pinned, and the "cores" columns
# are server CPU time divided by wall time over the cell. A third server, vessel with one worker,
# gives the scaling column: vessel's rps over its own one-worker rps in the same cell.
#
#   bench/scan.sh                 # REQUESTS=20000 per cell
#
# The requests per second are also written to docs/img/scan.dat and drawn beside it as an SVG
# chart (bench/chart.sh; CHART_DIR and CHARTS=0 change that).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh bench
source bench/chart.sh

VESSEL=${VESSEL:-build/bin/vessel-server}
REQUESTS=${REQUESTS:-20000}
CLIENTS_LIST=${CLIENTS_LIST:-1 4 16}
KEYS=${KEYS:-1000}
ELEMENTS=${ELEMENTS:-10000}
REDIS_PORT=${REDIS_PORT:-7390}
VESSEL_PORT=${VESSEL_PORT:-7391}
VESSEL1_PORT=${VESSEL1_PORT:-7392}

[ -x "$VESSEL" ] || { echo "build first: $VESSEL not found" >&2; exit 1; }
for port in "$REDIS_PORT" "$VESSEL_PORT" "$VESSEL1_PORT"; do
  if redis-cli -p "$port" ping >/dev/null 2>&1; then
    echo "port $port is already in use: stop that server or set REDIS_PORT/VESSEL_PORT" >&2
    exit 1
  fi
done
tck=$(getconf CLK_TCK)
redis-server --port "$REDIS_PORT" --save '' --appendonly no --daemonize no --logfile /dev/null &
redis_pid=$!
"$VESSEL" --port "$VESSEL_PORT" --save "" --threads 0 --log-level warn &
vessel_pid=$!
"$VESSEL" --port "$VESSEL1_PORT" --save "" --threads 1 --log-level warn &
vessel1_pid=$!
trap 'kill $redis_pid $vessel_pid $vessel1_pid 2>/dev/null; wait 2>/dev/null' EXIT
for port in "$REDIS_PORT" "$VESSEL_PORT" "$VESSEL1_PORT"; do
  for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.05; done
done

# key:000000000000 ... as redis-benchmark's __rand_int__ spells them (12 digits).
load() {
  python3 - "$KEYS" "$ELEMENTS" <<'PY' | redis-cli -p "$1" --pipe >/dev/null
import sys
keys, elements = int(sys.argv[1]), int(sys.argv[2])
out = sys.stdout
for k in range(keys):
    key = "key:%012d" % k
    for start in range(0, elements, 1000):
        items = ["e%d" % i for i in range(start, min(start + 1000, elements))]
        parts = ["RPUSH", key] + items
        out.write("*%d\r\n" % len(parts))
        for p in parts:
            out.write("$%d\r\n%s\r\n" % (len(p), p))
PY
}
load "$REDIS_PORT"
load "$VESSEL_PORT"
load "$VESSEL1_PORT"
echo "loaded $KEYS lists of $ELEMENTS elements: redis $(redis-cli -p "$REDIS_PORT" dbsize) keys," \
  "vessel $(redis-cli -p "$VESSEL_PORT" dbsize) keys"

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# cell PORT PID CLIENTS -> "rps cores"
cell() {
  local before after t0 t1 rps
  before=$(cpu_ticks "$2")
  t0=$(date +%s.%N)
  rps=$(redis-benchmark -p "$1" -n "$REQUESTS" -c "$3" -P 16 -r "$KEYS" --csv \
          LPOS key:__rand_int__ absent 2>/dev/null | awk -F'","' 'NR==2 {print $2}')
  t1=$(date +%s.%N)
  after=$(cpu_ticks "$2")
  awk -v r="$rps" -v d=$((after - before)) -v t="$tck" -v a="$t0" -v b="$t1" \
    'BEGIN { printf "%.0f %.2f\n", r, d / t / (b - a) }'
}

printf '%-8s %12s %12s %7s %12s %12s %12s %8s\n' clients redis_rps vessel_rps ratio redis_cores \
  vessel_cores vessel_1w_rps scaling
chart_begin scan "The scan workload: LPOS over a whole list, -P 16" "requests per second" \
  "bench/scan.sh: $KEYS lists of $ELEMENTS elements, LPOS key:__rand_int__ absent, $REQUESTS requests per cell, nothing pinned; more is better" \
  "redis-server 7.0.15|vessel, one worker per core"
for c in $CLIENTS_LIST; do
  read -r rr rcores <<<"$(cell "$REDIS_PORT" "$redis_pid" "$c")"
  read -r vr vcores <<<"$(cell "$VESSEL_PORT" "$vessel_pid" "$c")"
  read -r v1 _ <<<"$(cell "$VESSEL1_PORT" "$vessel1_pid" "$c")"
  ratio=$(awk -v a="$vr" -v b="$rr" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')
  scaling=$(awk -v a="$vr" -v b="$v1" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')
  printf '%-8s %12s %12s %7s %12s %12s %12s %8s\n' "$c" "$rr" "$vr" "$ratio" "$rcores" "$vcores" \
    "$v1" "$scaling"
  chart_row scan "$c clients" "$rr" "$vr"
done
chart_draw scan
