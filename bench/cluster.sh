#!/usr/bin/env bash
# Cluster mode, redis-server against vessel-server on this machine:
#   1. What cluster mode costs one node: each server alone (cluster-enabled no) and as a
#      one-node cluster owning every slot (cluster-enabled yes), pinned to SERVER_CORE (vessel
#      with one worker thread), redis-benchmark -P PIPELINE on CLIENT_CORE with random keys over
#      100,000 (commands of one key each: cluster mode refuses keys of several slots). ROUNDS
#      interleaved rounds, medians: requests per second, the server's CPU time per request
#      (/proc/<pid>/stat), the client's CPU share of its core, and cluster/standalone ratios.
#   2. A cluster of three masters (each its own process, all three on SERVER_CORE: the machine
#      has two cores) built with `redis-cli --cluster create`, redis-benchmark --cluster on
#      CLIENT_CORE: requests per second and the three servers' CPU time per request together.
#
#   bench/cluster.sh                      # ROUNDS=3 PIPELINE=16 REQUESTS=1000000
#   ROUNDS=5 TESTS=set,get bench/cluster.sh
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh bench

VESSEL=${VESSEL:-build/bin/vessel-server}
ROUNDS=${ROUNDS:-3}
CLIENTS=${CLIENTS:-50}
REQUESTS=${REQUESTS:-1000000}
PIPELINE=${PIPELINE:-16}
TESTS=${TESTS:-set,get,incr,lpush,lpop,sadd}
SERVER_CORE=${SERVER_CORE:-0}
CLIENT_CORE=${CLIENT_CORE:-1}
PORT=${PORT:-7420}  # the nodes take PORT..PORT+2, their buses PORT+10000..

DIR=$(mktemp -d)
PIDS=()
stop_all() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  PIDS=()
}
trap 'stop_all; rm -rf "$DIR"' EXIT

wait_ping() {
  for _ in $(seq 400); do
    redis-cli -p "$1" ping 2>/dev/null | grep -q PONG && return
    sleep 0.05
  done
  echo "server on port $1 did not start" >&2
  exit 1
}

start() {  # start <redis|vessel> <port> <cluster yes|no>: a fresh server in its own dir
  local d="$DIR/$1-$2"
  rm -rf "$d" && mkdir -p "$d"
  if [[ $1 == redis ]]; then
    taskset -c "$SERVER_CORE" redis-server --port "$2" --dir "$d" --save "" --appendonly no \
      --cluster-enabled "$3" --logfile /dev/null &
  else
    taskset -c "$SERVER_CORE" "$VESSEL" --port "$2" --threads 1 --dir "$d" --save "" \
      --appendonly no --cluster-enabled "$3" --log-level warn &
  fi
  PIDS+=($!)
  wait_ping "$2"
}

cluster_ok() {
  redis-cli -p "$1" cluster info | tr -d '\r' | grep -q '^cluster_state:ok'
}

cpu_ticks() {  # the summed user+system ticks of the given pids
  local t=0
  for p in "$@"; do t=$((t + $(awk '{ print $14 + $15 }' "/proc/$p/stat"))); done
  echo "$t"
}
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# bench <client seconds file> <redis-benchmark args...>: prints "<test> <rps>" lines; the
# client's CPU seconds (user + system) go to the file.
bench() {
  local out=$1
  shift
  (
    taskset -c "$CLIENT_CORE" redis-benchmark "$@" -P "$PIPELINE" -c "$CLIENTS" -n "$REQUESTS" \
      -r 100000 --csv >"$DIR/csv"
    times >"$DIR/times"
  )
  awk 'NR == 2 { split($1, u, "m"); split($2, s, "m"); print u[1] * 60 + u[2] + s[1] * 60 + s[2] }' \
    "$DIR/times" >"$out"
  # (--cluster prints the masters it found before the CSV lines.)
  tr -d '"' <"$DIR/csv" | awk -F, 'NF > 2 && $2 ~ /^[0-9.]+$/ { print tolower($1), $2 }'
}

hz=$(getconf CLK_TCK)
declare -A RPS US CL
echo "== One node: standalone against cluster mode, -P $PIPELINE, $CLIENTS clients," \
  "$REQUESTS requests per test, random keys over 100,000"
for round in $(seq "$ROUNDS"); do
  for s in redis vessel; do
    for mode in no yes; do
      start "$s" "$PORT" "$mode"
      if [[ $mode == yes ]]; then
        redis-cli -p "$PORT" cluster addslotsrange 0 16383 >/dev/null
        until cluster_ok "$PORT"; do sleep 0.05; done
      fi
      pid=${PIDS[-1]}
      for t in ${TESTS//,/ }; do
        t0=$(cpu_ticks "$pid")
        line=$(bench "$DIR/client" -p "$PORT" -t "$t" | head -1)
        t1=$(cpu_ticks "$pid")
        rps=${line##* }
        RPS[$s.$mode.$t]+="$rps "
        US[$s.$mode.$t]+="$(awk -v d=$((t1 - t0)) -v n="$REQUESTS" -v hz="$hz" \
          'BEGIN { printf "%.3f", d / hz * 1e6 / n }') "
        CL[$s.$mode.$t]+="$(awk -v c="$(cat "$DIR/client")" -v n="$REQUESTS" -v r="$rps" \
          'BEGIN { printf "%.0f", 100 * c / (n / r) }') "
      done
      stop_all
    done
  done
done
med() { tr ' ' '\n' <<<"$1" | grep . | median; }
printf '%-7s %-7s %11s %11s %9s %11s %11s %9s %7s %7s\n' server command rps_alone rps_cluster \
  rps_ratio us_alone us_cluster us_ratio cl%_a cl%_c
for t in ${TESTS//,/ }; do
  for s in redis vessel; do
    ra=$(med "${RPS[$s.no.$t]}") rc=$(med "${RPS[$s.yes.$t]}")
    ua=$(med "${US[$s.no.$t]}") uc=$(med "${US[$s.yes.$t]}")
    printf '%-7s %-7s %11s %11s %9.3f %11s %11s %9.3f %7s %7s\n' "$s" "$t" "$ra" "$rc" \
      "$(echo "$rc / $ra" | bc -l)" "$ua" "$uc" "$(echo "$uc / $ua" | bc -l)" \
      "$(med "${CL[$s.no.$t]}")" "$(med "${CL[$s.yes.$t]}")"
  done
done

echo
echo "== Three masters, redis-benchmark --cluster, -P $PIPELINE, $CLIENTS clients"
declare -A CRPS CUS CCL
for round in $(seq "$ROUNDS"); do
  for s in redis vessel; do
    for i in 0 1 2; do start "$s" $((PORT + i)) yes; done
    pids=("${PIDS[@]}")
    redis-cli --cluster create 127.0.0.1:"$PORT" 127.0.0.1:$((PORT + 1)) \
      127.0.0.1:$((PORT + 2)) --cluster-yes >/dev/null
    for i in 0 1 2; do until cluster_ok $((PORT + i)); do sleep 0.05; done; done
    sleep 1  # every node knows every other's slots
    for t in set get; do
      t0=$(cpu_ticks "${pids[@]}")
      line=$(bench "$DIR/client" --cluster -p "$PORT" -t "$t" | head -1)
      t1=$(cpu_ticks "${pids[@]}")
      rps=${line##* }
      CRPS[$s.$t]+="$rps "
      CUS[$s.$t]+="$(awk -v d=$((t1 - t0)) -v n="$REQUESTS" -v hz="$hz" \
        'BEGIN { printf "%.3f", d / hz * 1e6 / n }') "
      CCL[$s.$t]+="$(awk -v c="$(cat "$DIR/client")" -v n="$REQUESTS" -v r="$rps" \
        'BEGIN { printf "%.0f", 100 * c / (n / r) }') "
    done
    stop_all
  done
done
printf '%-7s %-7s %11s %11s %8s\n' server command rps us/request client%
for t in set get; do
  for s in redis vessel; do
    printf '%-7s %-7s %11s %11s %8s\n' "$s" "$t" "$(med "${CRPS[$s.$t]}")" \
      "$(med "${CUS[$s.$t]}")" "$(med "${CCL[$s.$t]}")"
  done
  printf '%-7s %-7s %11.3f %11.3f\n' ratio "$t" \
    "$(echo "$(med "${CRPS[vessel.$t]}") / $(med "${CRPS[redis.$t]}")" | bc -l)" \
    "$(echo "$(med "${CUS[vessel.$t]}") / $(med "${CUS[redis.$t]}")" | bc -l)"
done
