#!/usr/bin/env bash
# Scripts on disjoint declared keys scale over worker threads: EVALSHA of a 3-command script
# (INCR, SET, GET on two random declared keys) against vessel-server with 1, 2, ... workers, and
# against redis-server for reference. Prints requests per second for each.
#
#   bench/scripting_scale.sh                      # THREADS="1 2" PIPELINE=1
#   THREADS="1 2 4" PIPELINE=16 REQUESTS=400000 bench/scripting_scale.sh
set -euo pipefail
cd "$(dirname "$0")/.."

VESSEL=${VESSEL:-build/bin/vessel-server}
THREADS=${THREADS:-1 2}
PIPELINE=${PIPELINE:-1}
CLIENTS=${CLIENTS:-50}
REQUESTS=${REQUESTS:-200000}
PORT=${PORT:-7391}
SCRIPT="redis.call('incr', KEYS[1]) redis.call('set', KEYS[2], ARGV[1]) return redis.call('get', KEYS[1])"
SHA=$(printf '%s' "$SCRIPT" | sha1sum | cut -c1-40)

[ -x "$VESSEL" ] || { echo "build first: $VESSEL not found" >&2; exit 1; }
if redis-cli -p "$PORT" ping >/dev/null 2>&1; then
  echo "port $PORT is already in use: set PORT" >&2
  exit 1
fi

# measure NAME: loads the script and prints the EVALSHA rate of the server on $PORT.
measure() {
  for _ in $(seq 100); do redis-cli -p "$PORT" ping >/dev/null 2>&1 && break; sleep 0.05; done
  redis-cli -p "$PORT" SCRIPT LOAD "$SCRIPT" >/dev/null
  # The first run of a script holds the whole keyspace (it learns its keys): run it once.
  redis-cli -p "$PORT" EVALSHA "$SHA" 2 warm:a warm:b x >/dev/null
  rps=$(redis-benchmark -p "$PORT" -n "$REQUESTS" -c "$CLIENTS" -P "$PIPELINE" -r 1000000 --csv \
          EVALSHA "$SHA" 2 cnt:__rand_int__ val:__rand_int__ x 2>/dev/null |
        awk -F'","' 'NR > 1 {r = $2} END {print r}')
  printf '%-14s %12s\n' "$1" "$rps"
}

printf '%-14s %12s   (EVALSHA 3 commands, -P %s, -c %s)\n' server rps "$PIPELINE" "$CLIENTS"
redis-server --port "$PORT" --save '' --appendonly no --logfile /dev/null &
pid=$!
measure redis-server
kill "$pid"; wait "$pid" 2>/dev/null || true
for t in $THREADS; do
  "$VESSEL" --port "$PORT" --save "" --threads "$t" --log-level warn &
  pid=$!
  measure "vessel -t $t"
  kill "$pid"; wait "$pid" 2>/dev/null || true
done
