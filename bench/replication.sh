#!/usr/bin/env bash
# Replication, redis-server against vessel-server as the master on this machine:
#   1. What replicas cost the master: SET -P 16 (CLIENTS clients, random keys over 100,000) with
#      0, 1 and 2 replicas attached. Each master runs pinned to SERVER_CORE (vessel with one
#      worker thread); the replicas (redis-server for both masters, so that both feed the same
#      replicas) and redis-benchmark share CLIENT_CORE. ROUNDS interleaved rounds, medians: the
#      master's requests per second, its CPU time per request (/proc/<pid>/stat) and both as a
#      ratio to the same master without replicas.
#   2. A full synchronization of SYNC_KEYS string keys (key:N -> 16 bytes) to one redis-server
#      replica, while a probe client writes on the master: seconds from REPLICAOF to the
#      replica's link up, the master's peak RSS growth during the sync (its process only: Redis's
#      fork child is reported apart, as rdb_last_cow_size), rdb_last_cow_size (the fork child's
#      copied pages in Redis; in Vessel the peak of the snapshot's side buffers), and the probe's
#      worst SET latency during the sync against its worst before it.
#
#   bench/replication.sh                          # ROUNDS=3, SYNC_KEYS="1000000 10000000"
#   SYNC_KEYS=1000000 ROUNDS=5 REQUESTS=2000000 bench/replication.sh
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh bench

VESSEL=${VESSEL:-build/bin/vessel-server}
ROUNDS=${ROUNDS:-3}
CLIENTS=${CLIENTS:-50}
REQUESTS=${REQUESTS:-1000000}
SYNC_KEYS=${SYNC_KEYS:-"1000000 10000000"}
SERVER_CORE=${SERVER_CORE:-0}
CLIENT_CORE=${CLIENT_CORE:-1}
PORT=${PORT:-7395}  # the master; replicas on PORT+1, PORT+2

DIR=$(mktemp -d)
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$DIR"
}
trap cleanup EXIT

wait_ping() {
  for _ in $(seq 400); do
    redis-cli -p "$1" ping 2>/dev/null | grep -q PONG && return
    sleep 0.05
  done
  echo "server on port $1 did not start" >&2
  exit 1
}

MASTER=
start_master() {  # start_master <redis|vessel>
  rm -rf "$DIR/m" && mkdir -p "$DIR/m"
  if [[ $1 == redis ]]; then
    taskset -c "$SERVER_CORE" redis-server --port "$PORT" --dir "$DIR/m" --save "" \
      --appendonly no --repl-diskless-sync-delay 0 --logfile /dev/null &
  else
    taskset -c "$SERVER_CORE" "$VESSEL" --port "$PORT" --threads 1 --dir "$DIR/m" --save "" \
      --appendonly no --repl-diskless-sync-delay 0 --log-level warn &
  fi
  MASTER=$!
  PIDS+=("$MASTER")
  wait_ping "$PORT"
}

start_replica() {  # start_replica <n>: a redis-server replica of the master on PORT+n
  local port=$((PORT + $1))
  rm -rf "$DIR/r$1" && mkdir -p "$DIR/r$1"
  taskset -c "$CLIENT_CORE" redis-server --port "$port" --dir "$DIR/r$1" --save "" \
    --appendonly no --logfile /dev/null &
  PIDS+=($!)
  wait_ping "$port"
}

link_up() {
  redis-cli -p "$1" info replication | tr -d '\r' | grep -q '^master_link_status:up'
}

stop_all() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  PIDS=()
}

cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }

echo "== SET -P 16, $CLIENTS clients, $REQUESTS requests, random keys over 100,000"
declare -A RPS US
for round in $(seq "$ROUNDS"); do
  for replicas in 0 1 2; do
    for s in redis vessel; do
      start_master "$s"
      for i in $(seq "$replicas"); do
        start_replica "$i"
        redis-cli -p $((PORT + i)) replicaof 127.0.0.1 "$PORT" >/dev/null
        until link_up $((PORT + i)); do sleep 0.05; done
      done
      t0=$(cpu_ticks "$MASTER")
      rps=$(taskset -c "$CLIENT_CORE" redis-benchmark -p "$PORT" -t set -P 16 -c "$CLIENTS" \
        -n "$REQUESTS" -r 100000 -q | grep -o '[0-9.]* requests per second' | cut -d' ' -f1)
      t1=$(cpu_ticks "$MASTER")
      us=$(awk -v t="$((t1 - t0))" -v n="$REQUESTS" -v hz="$(getconf CLK_TCK)" \
        'BEGIN { printf "%.3f", t / hz * 1e6 / n }')
      RPS[$s.$replicas]+="$rps "
      US[$s.$replicas]+="$us "
      stop_all
    done
  done
done
printf '%-8s %8s %12s %10s %10s %10s\n' master replicas 'requests/s' us/request rps_vs_0 \
  us_vs_0
for s in redis vessel; do
  r0=$(tr ' ' '\n' <<<"${RPS[$s.0]}" | grep . | median)
  u0=$(tr ' ' '\n' <<<"${US[$s.0]}" | grep . | median)
  for replicas in 0 1 2; do
    r=$(tr ' ' '\n' <<<"${RPS[$s.$replicas]}" | grep . | median)
    u=$(tr ' ' '\n' <<<"${US[$s.$replicas]}" | grep . | median)
    printf '%-8s %8d %12s %10s %10.2f %10.2f\n' "$s" "$replicas" "$r" "$u" \
      "$(echo "$r / $r0" | bc -l)" "$(echo "$u / $u0" | bc -l)"
  done
done

# probe <port> <stop-file>: SETs in a loop on one connection until the file exists; prints the
# worst round trip in milliseconds.
probe() {
  python3 - "$1" "$2" <<'EOF'
import os, socket, sys, time
port, stop = int(sys.argv[1]), sys.argv[2]
s = socket.create_connection(("127.0.0.1", port))
worst, i = 0.0, 0
while not os.path.exists(stop):
    i += 1
    k = b"probe:%d" % (i % 1000)
    t0 = time.perf_counter()
    s.sendall(b"*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$1\r\nv\r\n" % (len(k), k))
    got = b""
    while not got.endswith(b"\r\n"):
        got += s.recv(64)
    worst = max(worst, time.perf_counter() - t0)
    time.sleep(0.001)
print("%.1f" % (worst * 1000))
EOF
}

fill() {  # fill <keys>
  python3 -c "
import sys
out = sys.stdout.buffer
for i in range($1):
    k = b'key:%d' % i
    v = b'value-%010d' % i
    out.write(b'*3\r\n\$3\r\nSET\r\n\$%d\r\n%s\r\n\$%d\r\n%s\r\n' % (len(k), k, len(v), v))
" | redis-cli -p "$PORT" --pipe >/dev/null
}

echo
echo "== Full synchronization to one redis-server replica, with a probe writing on the master"
printf '%-8s %9s %8s %9s %9s %11s %11s\n' master keys sync_s rss_MB cow_MB probe_before \
  probe_during
for keys in $SYNC_KEYS; do
  for s in redis vessel; do
    start_master "$s"
    fill "$keys"
    start_replica 1
    rm -f "$DIR/stop"
    probe "$PORT" "$DIR/stop" >"$DIR/before" &
    P=$!
    sleep 2
    touch "$DIR/stop"
    wait "$P"
    rm -f "$DIR/stop"
    probe "$PORT" "$DIR/stop" >"$DIR/during" &
    P=$!
    rss0=$(rss_kb "$MASTER")
    peak=$rss0
    t0=$(date +%s.%N)
    redis-cli -p $((PORT + 1)) replicaof 127.0.0.1 "$PORT" >/dev/null
    until link_up $((PORT + 1)); do
      r=$(rss_kb "$MASTER")
      ((r > peak)) && peak=$r
      sleep 0.02
    done
    t1=$(date +%s.%N)
    touch "$DIR/stop"
    wait "$P"
    cow=$(redis-cli -p "$PORT" info persistence | tr -d '\r' | grep '^rdb_last_cow_size:' |
      cut -d: -f2)
    printf '%-8s %9d %8.2f %9.1f %9.1f %11s %11s\n' "$s" "$keys" "$(echo "$t1 - $t0" | bc)" \
      "$(echo "($peak - $rss0) / 1024" | bc -l)" "$(echo "${cow:-0} / 1048576" | bc -l)" \
      "$(cat "$DIR/before")" "$(cat "$DIR/during")"
    stop_all
  done
done
