#!/usr/bin/env bash
# Random access by position, side by side: VEC.INDEX on a vessel vector against LINDEX on a
# redis-server list of the same elements (100,000 by default, read at index 50,000).
#
# The pattern of bench/compare.sh: both servers run at once, each pinned to its own core with
# taskset (vessel with one worker thread); redis-benchmark runs pinned to the *other* core of the
# server it measures. Every cell prints both servers' requests per second, their ratio, and each
# server's CPU time per operation read from /proc/<pid>/stat before and after the cell (stable on
# a noisy machine). Each server is calibrated separately so that its cell runs about
# SECONDS_PER_CELL seconds. A last line gives LINDEX on vessel's own lists module, for reference.
#
#   bench/vectors_compare.sh
#   INDEXES="0 50000 99999" PIPELINES="1 16" bench/vectors_compare.sh
#   VESSEL=/path/to/vessel-server LEN=1000000 INDEXES=500000 bench/vectors_compare.sh
#
# The CPU per operation is also written to docs/img/cpu-vectors.dat and drawn beside it as an SVG
# chart (bench/chart.sh; CHART_DIR and CHARTS=0 change that).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh bench
source bench/chart.sh

VESSEL=${VESSEL:-build/bin/vessel-server}
LEN=${LEN:-100000}
INDEXES=${INDEXES:-50000}
PIPELINES=${PIPELINES:-16}
CLIENTS=${CLIENTS:-50}
SECONDS_PER_CELL=${SECONDS_PER_CELL:-3}
REDIS_CORE=${REDIS_CORE:-0}
VESSEL_CORE=${VESSEL_CORE:-1}
REDIS_PORT=${REDIS_PORT:-7390}
VESSEL_PORT=${VESSEL_PORT:-7391}
KEY=${KEY:-bench:seq}

[ -x "$VESSEL" ] || { echo "build first: $VESSEL not found" >&2; exit 1; }
module_dir=$(dirname "$VESSEL")/modules
[ -f "$module_dir/vectors.so" ] || { echo "build the vectors module: $module_dir/vectors.so" >&2; exit 1; }
tck=$(getconf CLK_TCK)
work=$(mktemp -d)

# Only the modules this benchmark needs (a [[modules]] list replaces the built-in one).
{
  echo '[[modules]]'
  echo 'path = "vectors"'
  if [ -f "$module_dir/lists.so" ]; then
    echo '[[modules]]'
    echo 'path = "lists"'
  fi
} >"$work/vessel.toml"

taskset -c "$REDIS_CORE" redis-server --port "$REDIS_PORT" --save '' --appendonly no \
  --daemonize no --logfile /dev/null & redis_pid=$!
taskset -c "$VESSEL_CORE" "$VESSEL" --config "$work/vessel.toml" --port "$VESSEL_PORT" --save "" \
  --threads 1 --log-level warn & vessel_pid=$!
trap 'kill $redis_pid $vessel_pid 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
for port in "$REDIS_PORT" "$VESSEL_PORT"; do
  for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.05; done
done

# load PORT COMMAND: LEN elements "element:<i>" appended to KEY, 1000 per command, as RESP.
load() {
  awk -v len="$LEN" -v cmd="$2" -v key="$KEY" 'BEGIN {
    for (i = 0; i < len; i += 1000) {
      n = (len - i < 1000) ? len - i : 1000
      printf "*%d\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n", n + 2, length(cmd), cmd, length(key), key
      for (j = i; j < i + n; j++) { e = "element:" j; printf "$%d\r\n%s\r\n", length(e), e }
    }
  }' | redis-cli -p "$1" --pipe >/dev/null
}
load "$REDIS_PORT" RPUSH
load "$VESSEL_PORT" VEC.PUSH
has_lists=0
if [ -f "$module_dir/lists.so" ]; then
  KEY="$KEY:list" load "$VESSEL_PORT" RPUSH
  has_lists=1
fi

# Both hold the same sequence: check the length and the element read.
for i in $INDEXES; do
  want="element:$i"
  r=$(redis-cli -p "$REDIS_PORT" LINDEX "$KEY" "$i")
  v=$(redis-cli -p "$VESSEL_PORT" VEC.INDEX "$KEY" "$i")
  if [ "$r" != "$want" ] || [ "$v" != "$want" ]; then
    echo "index $i: redis '$r' vessel '$v'" >&2
    exit 1
  fi
done
[ "$(redis-cli -p "$REDIS_PORT" LLEN "$KEY")" = "$LEN" ] || { echo "redis length" >&2; exit 1; }
[ "$(redis-cli -p "$VESSEL_PORT" VEC.LEN "$KEY")" = "$LEN" ] || { echo "vessel length" >&2; exit 1; }

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# run_cell PORT PID CORE PIPELINE REQUESTS COMMAND... -> "rps cpu_us_per_op"
run_cell() {
  local port=$1 pid=$2 core=$3 pipeline=$4 n=$5
  shift 5
  local before after rps
  before=$(cpu_ticks "$pid")
  rps=$(taskset -c "$core" redis-benchmark -p "$port" -n "$n" -c "$CLIENTS" -P "$pipeline" \
          --csv "$@" 2>/dev/null | awk -F'","' 'NR==2 {print $2}')
  after=$(cpu_ticks "$pid")
  awk -v r="$rps" -v d=$((after - before)) -v t="$tck" -v n="$n" \
    'BEGIN { printf "%.0f %.2f\n", r, d / t * 1e6 / n }'
}

# measure PORT PID CORE PIPELINE COMMAND...: calibrated to SECONDS_PER_CELL -> "rps us/op"
measure() {
  local port=$1 pid=$2 core=$3 pipeline=$4 probe n
  shift 4
  probe=$(run_cell "$port" "$pid" "$core" "$pipeline" 20000 "$@" | cut -d' ' -f1)
  n=$(( probe * SECONDS_PER_CELL ))
  [ "$n" -lt 20000 ] && n=20000
  run_cell "$port" "$pid" "$core" "$pipeline" "$n" "$@"
}

echo "one $LEN-element sequence per server; redis LINDEX on a list vs vessel VEC.INDEX on a vector"
chart_begin cpu-vectors "Random access by position: LINDEX against VEC.INDEX" \
  "server CPU µs per operation" \
  "bench/vectors_compare.sh: one $LEN-element sequence per server, each server on its own core (vessel --threads 1), redis-benchmark -c $CLIENTS on the other core" \
  "redis-server 7.0.15 LINDEX|vessel VEC.INDEX"
printf '%-8s %3s %14s %14s %8s %12s %13s\n' index -P redis_LINDEX vessel_VEC.IDX ratio \
  redis_us/op vessel_us/op
for i in $INDEXES; do
  for p in $PIPELINES; do
    read -r rr rc <<<"$(measure "$REDIS_PORT" "$redis_pid" "$VESSEL_CORE" "$p" LINDEX "$KEY" "$i")"
    read -r vr vc <<<"$(measure "$VESSEL_PORT" "$vessel_pid" "$REDIS_CORE" "$p" VEC.INDEX "$KEY" "$i")"
    ratio=$(awk -v a="$vr" -v b="$rr" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')
    printf '%-8s %3s %14s %14s %8s %12s %13s\n' "$i" "$p" "$rr" "$vr" "$ratio" "$rc" "$vc"
    chart_row cpu-vectors "index $i, -P $p" "$rc" "$vc"
  done
done
chart_draw cpu-vectors
if [ "$has_lists" = 1 ]; then
  for i in $INDEXES; do
    for p in $PIPELINES; do
      read -r lr lc <<<"$(measure "$VESSEL_PORT" "$vessel_pid" "$REDIS_CORE" "$p" LINDEX "$KEY:list" "$i")"
      printf 'reference: vessel LINDEX (lists module) index %s -P %s: %s rps, %s us/op\n' \
        "$i" "$p" "$lr" "$lc"
    done
  done
fi
