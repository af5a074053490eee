#!/usr/bin/env bash
# Persistence, redis-server against vessel-server on this machine:
#   1. SAVE of KEYS string keys (key:N -> 16-byte value): seconds and dump.rdb size;
#   2. SET throughput (redis-benchmark -P 16) with appendonly yes + appendfsync everysec / always;
#   3. BGSAVE while redis-benchmark writes, for each size in BGSAVE_KEYS: snapshot time, the
#      writers' p99 and max latency alone and during it, and the snapshot's extra memory
#      (rdb_last_cow_size: the fork child's copied pages in Redis, the peak of the side buffers
#      of shards written during the snapshot in Vessel).
# Each server runs alone, pinned to one core (vessel with one worker thread), in a temporary dir.
#
#   bench/persistence.sh                 # KEYS=1000000
#   KEYS=200000 REQUESTS=200000 bench/persistence.sh
set -euo pipefail
cd "$(dirname "$0")/.."

VESSEL=${VESSEL:-build/bin/vessel-server}
KEYS=${KEYS:-1000000}
REQUESTS=${REQUESTS:-500000}
CLIENTS=${CLIENTS:-50}
BGSAVE_KEYS=${BGSAVE_KEYS:-"$KEYS"}
SERVER_CORE=${SERVER_CORE:-0}
CLIENT_CORE=${CLIENT_CORE:-1}
PORT=${PORT:-7390}

DIR=$(mktemp -d)
PID=
cleanup() {
  [[ -n "$PID" ]] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null || true
  rm -rf "$DIR"
}
trap cleanup EXIT

start() {  # start <redis|vessel> [extra args...]
  local which=$1
  shift
  rm -rf "$DIR"/*
  if [[ $which == redis ]]; then
    taskset -c "$SERVER_CORE" redis-server --port "$PORT" --dir "$DIR" --save "" \
      --logfile /dev/null "$@" &
  else
    taskset -c "$SERVER_CORE" "$VESSEL" --port "$PORT" --threads 1 --dir "$DIR" --save "" \
      --log-level warn "$@" &
  fi
  PID=$!
  for _ in $(seq 200); do
    redis-cli -p "$PORT" ping 2>/dev/null | grep -q PONG && return
    sleep 0.05
  done
  echo "server did not start" >&2
  exit 1
}

stop() {
  redis-cli -p "$PORT" shutdown nosave >/dev/null 2>&1 || true
  wait "$PID" 2>/dev/null || true
  PID=
}

fill() {  # fill [keys]
  python3 -c "
import sys
out = sys.stdout.buffer
for i in range(${1:-$KEYS}):
    k = b'key:%d' % i
    v = b'value-%010d' % i
    out.write(b'*3\r\n\$3\r\nSET\r\n\$%d\r\n%s\r\n\$%d\r\n%s\r\n' % (len(k), k, len(v), v))
" | redis-cli -p "$PORT" --pipe >/dev/null
}

now() { date +%s.%N; }

echo "== SAVE of $KEYS keys"
printf '%-8s %10s %14s\n' server seconds dump.rdb
for s in redis vessel; do
  start "$s"
  fill
  t0=$(now)
  redis-cli -p "$PORT" save >/dev/null
  t1=$(now)
  printf '%-8s %10.3f %14d\n' "$s" "$(echo "$t1 - $t0" | bc)" "$(stat -c %s "$DIR/dump.rdb")"
  stop
done

echo
echo "== SET -P 16, $CLIENTS clients, $REQUESTS requests, appendonly yes"
printf '%-8s %-10s %12s\n' server appendfsync 'requests/s'
for fsync in everysec always; do
  for s in redis vessel; do
    start "$s" --appendonly yes --appendfsync "$fsync"
    rps=$(taskset -c "$CLIENT_CORE" redis-benchmark -p "$PORT" -t set -P 16 -c "$CLIENTS" \
      -n "$REQUESTS" -r 100000 -q | grep -o '[0-9.]* requests per second' | cut -d' ' -f1)
    printf '%-8s %-10s %12s\n' "$s" "$fsync" "$rps"
    stop
  done
done

echo
echo "== BGSAVE under a SET load (-P 1, $CLIENTS clients, keys/10 requests over all keys)"
# The load runs once alone and once started together with BGSAVE (keys/10 requests last about as
# long as the snapshot). p99 and max are redis-benchmark's, in milliseconds; extra_MB is
# rdb_last_cow_size.
printf '%-8s %9s %9s %10s %11s %10s %11s %9s\n' server keys bgsave_s p99_alone p99_during \
  max_alone max_during extra_MB
load() { timeout 600 taskset -c "$CLIENT_CORE" redis-benchmark -p "$PORT" -t set -c "$CLIENTS" \
  -n "$(($1 / 10))" -r "$1" --csv 2>/dev/null | tail -1 | tr -d '"' | cut -d, -f7,8; }
for keys in $BGSAVE_KEYS; do
  for s in redis vessel; do
    start "$s"
    fill "$keys"
    alone=$(load "$keys")
    load "$keys" > "$DIR/during.csv" &
    LOAD=$!
    t0=$(now)
    redis-cli -p "$PORT" bgsave >/dev/null
    sleep 0.01
    while redis-cli -p "$PORT" info persistence | grep -q 'rdb_bgsave_in_progress:1'; do
      sleep 0.01
    done
    t1=$(now)
    wait "$LOAD"
    during=$(cat "$DIR/during.csv")
    cow=$(redis-cli -p "$PORT" info persistence | tr -d '\r' | grep '^rdb_last_cow_size:' | cut -d: -f2)
    printf '%-8s %9d %9.3f %10s %11s %10s %11s %9.1f\n' "$s" "$keys" "$(echo "$t1 - $t0" | bc)" \
      "${alone%,*}" "${during%,*}" "${alone#*,}" "${during#*,}" "$(echo "$cow / 1048576" | bc -l)"
    stop
  done
done
