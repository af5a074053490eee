#!/usr/bin/env bash
# Instructions per request, redis-server against vessel-server, counted by callgrind: stable on a
# busy machine where requests per second are not. Each server runs under valgrind with
# instrumentation off; for every cell it is switched on, redis-benchmark sends REQUESTS requests,
# and the dump gives the instructions executed by the whole server process (event loop, parsing,
# command, reply, system-call wrappers) divided by REQUESTS.
#
#   bench/instructions.sh
#   TESTS="set get lpush" PIPELINES="1 16" REQUESTS=50000 bench/instructions.sh
#   USER_RULES="on nopass ~key:* ~counter:* ~mylist* ~myset* +@all -@dangerous" bench/instructions.sh
#     (redis-benchmark authenticates as user `bench` with these ACL rules on both servers: the
#     cost of permission checks on plain traffic, against the default user's run)
#   REPLICAS=2 TESTS=set PIPELINES=16 bench/instructions.sh
#     (each server first gets that many redis-server replicas, not counted: what feeding the
#     replication stream costs the master, against the run without)
#
# Each pipeline depth's figures are also written to docs/img/instructions-p<P>.dat
# (instructions-rules-p<P> with USER_RULES) and drawn beside it as an SVG chart (bench/chart.sh;
# CHART_DIR and CHARTS=0 change that).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh bench
source bench/chart.sh

VESSEL=${VESSEL:-build/bin/vessel-server}
TESTS=${TESTS:-set get incr lpush sadd}
PIPELINES=${PIPELINES:-1 16}
REQUESTS=${REQUESTS:-20000}
REDIS_PORT=${REDIS_PORT:-7387}
VESSEL_PORT=${VESSEL_PORT:-7388}

[ -x "$VESSEL" ] || { echo "build first: $VESSEL not found" >&2; exit 1; }
command -v callgrind_control >/dev/null || { echo "needs valgrind (apt-get install valgrind)" >&2; exit 1; }
for port in "$REDIS_PORT" "$VESSEL_PORT"; do
  if redis-cli -p "$port" ping >/dev/null 2>&1; then
    echo "port $port is already in use: stop that server or set REDIS_PORT/VESSEL_PORT" >&2
    exit 1
  fi
done
dir=$(mktemp -d)
vg=(valgrind --tool=callgrind --instr-atstart=no)
"${vg[@]}" --callgrind-out-file="$dir/redis.%p" redis-server --port "$REDIS_PORT" --save '' \
  --appendonly no --daemonize no --logfile /dev/null 2>/dev/null &
rp=$!
"${vg[@]}" --callgrind-out-file="$dir/vessel.%p" "$VESSEL" --port "$VESSEL_PORT" --save "" --threads 1 \
  --log-level warn 2>/dev/null &
vp=$!
trap 'kill $rp $vp 2>/dev/null; wait 2>/dev/null; rm -rf "$dir"' EXIT
for port in "$REDIS_PORT" "$VESSEL_PORT"; do
  for _ in $(seq 600); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
done

REPLICAS=${REPLICAS:-0}
replica_pids=()
for port in "$REDIS_PORT" "$VESSEL_PORT"; do
  for i in $(seq "$REPLICAS"); do
    mkdir -p "$dir/replica.$port.$i"
    redis-server --port $((port + 100 * i)) --save '' --appendonly no --daemonize no \
      --logfile /dev/null --dir "$dir/replica.$port.$i" --replicaof 127.0.0.1 "$port" &
    replica_pids+=($!)
    for _ in $(seq 600); do
      redis-cli -p $((port + 100 * i)) INFO replication 2>/dev/null |
        grep -q 'master_link_status:up' && break
      sleep 0.1
    done
  done
done
trap 'kill $rp $vp ${replica_pids[*]} 2>/dev/null; wait 2>/dev/null; rm -rf "$dir"' EXIT

auth=()
if [[ -n "${USER_RULES:-}" ]]; then
  for port in "$REDIS_PORT" "$VESSEL_PORT"; do
    # shellcheck disable=SC2086
    redis-cli -p "$port" ACL SETUSER bench reset $USER_RULES >/dev/null
  done
  auth=(--user bench -a unused)
fi

# count PID PORT TEST PIPELINE -> instructions per request
count() {
  local pid=$1 port=$2 test=$3 p=$4 total
  callgrind_control -z "$pid" >/dev/null 2>&1
  callgrind_control -i on "$pid" >/dev/null 2>&1
  redis-benchmark -p "$port" "${auth[@]}" -n "$REQUESTS" -c 1 -P "$p" -r 100000 -t "$test" -q \
    >/dev/null 2>&1
  callgrind_control -i off "$pid" >/dev/null 2>&1
  rm -f "$dir"/*."$pid".*
  callgrind_control -d "$pid" >/dev/null 2>&1
  total=$(awk '/^totals:/ {t = $2} END {print t}' "$dir"/*."$pid".*)
  awk -v t="$total" -v n="$REQUESTS" 'BEGIN { printf "%.0f", t / n }'
}

tag=""
[[ -n "${USER_RULES:-}" ]] && tag="-rules"
[[ "$REPLICAS" != 0 ]] && tag="$tag-replicas$REPLICAS"
extra=""
[[ -n "${USER_RULES:-}" ]] && extra=", restricted ACL user"
[[ "$REPLICAS" != 0 ]] && extra="$extra, $REPLICAS replicas"
for p in $PIPELINES; do
  chart_begin "instructions$tag-p$p" \
    "Instructions per request, -P $p$extra" "instructions per request" \
    "bench/instructions.sh: callgrind, whole server process (vessel --threads 1), redis-benchmark -c 1 -P $p, $REQUESTS requests per cell${USER_RULES:+, ACL rules: $USER_RULES}, $REPLICAS replicas"
done
printf '%-7s %3s %12s %12s %7s\n' test -P redis_instr vessel_instr ratio
for t in $TESTS; do
  for p in $PIPELINES; do
    r=$(count "$rp" "$REDIS_PORT" "$t" "$p")
    v=$(count "$vp" "$VESSEL_PORT" "$t" "$p")
    printf '%-7s %3s %12s %12s %7s\n' "$t" "$p" "$r" "$v" \
      "$(awk -v v="$v" -v r="$r" 'BEGIN { printf "%.2f", v / r }')"
    chart_row "instructions$tag-p$p" "${t^^}" "$r" "$v"
  done
done
for p in $PIPELINES; do chart_draw "instructions$tag-p$p"; done
