#!/usr/bin/env bash
# The multi_index family against the same data kept by hand in redis-server, side by side.
#
# Data: RECORDS users {email (unique), age (18..80), name, city}.
#   vessel: one key, MI.CREATE users INDEX email email HASH UNIQUE INDEX age age ORDERED NUMERIC,
#           one MI.INSERT per user.
#   redis:  what users write without it: a hash per record (user:<id>), a hash email -> id
#           (users:email) and a sorted set of ids by age (users:age); three writes per user.
# Logical operations compared:
#   get-by-email  vessel: MI.GET users email <e>
#                 redis:  HGET users:email <e>, then HGETALL user:<id>
#   range-age     vessel: MI.RANGE users age 30 31 LIMIT 0 10
#                 redis:  ZRANGEBYSCORE users:age 30 31 LIMIT 0 10, then 10 x HGETALL user:<id>
#   load          vessel: MI.INSERT; redis: HSET + HSET + ZADD (from redis-cli --pipe)
# Method: redis-benchmark cannot feed one reply into the next command, so each redis command of
# a logical operation is measured in its own cell (same clients, pipeline and random keys:
# __rand_int__ gives the 12-digit ids the data uses) and the cells are combined: CPU per logical
# op = sum of count x CPU per command; time per logical op = sum of count / rps. This is the
# server's cost; a real client also pays the extra round trip of the dependent second command
# (not counted here: it favours redis). CPU time per op is read from /proc/<pid>/stat around
# each cell, which stays stable on a busy machine, while rps depends on the client too.
# As bench/compare.sh: both servers run at once, each pinned to one core (vessel with one worker
# thread), and redis-benchmark runs pinned to the other core.
#
#   bench/multi_index_compare.sh
#   RECORDS=20000 PIPELINES="1" REQUESTS=50000 bench/multi_index_compare.sh
#
# The CPU per logical operation and the memory per record are also written to
# docs/img/cpu-multi_index.dat and memory-multi_index.dat and drawn beside them as SVG charts
# (bench/chart.sh; CHART_DIR and CHARTS=0 change that).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh bench
source bench/chart.sh

VESSEL=${VESSEL:-build/bin/vessel-server}
RECORDS=${RECORDS:-100000}
PIPELINES=${PIPELINES:-1 16}
CLIENTS=${CLIENTS:-50}
REQUESTS=${REQUESTS:-200000}  # per cell
REDIS_CORE=${REDIS_CORE:-0}
VESSEL_CORE=${VESSEL_CORE:-1}
REDIS_PORT=${REDIS_PORT:-7382}
VESSEL_PORT=${VESSEL_PORT:-7383}
VESSEL_ARGS=${VESSEL_ARGS:-}  # extra flags for vessel-server, e.g. --config FILE

[ -x "$VESSEL" ] || { echo "build first: $VESSEL not found" >&2; exit 1; }
tck=$(getconf CLK_TCK)
work=$(mktemp -d)

taskset -c "$REDIS_CORE" redis-server --port "$REDIS_PORT" --save '' --appendonly no \
  --daemonize no --logfile /dev/null & redis_pid=$!
taskset -c "$VESSEL_CORE" "$VESSEL" --port "$VESSEL_PORT" --save "" --threads 1 --log-level warn $VESSEL_ARGS &
vessel_pid=$!
trap 'kill $redis_pid $vessel_pid 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
for port in "$REDIS_PORT" "$VESSEL_PORT"; do
  for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.05; done
done

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
used_memory() { redis-cli -p "$1" info memory | awk -F: '/^used_memory:/ {print $2+0}'; }

# ---- load ----
python3 - "$RECORDS" "$work/mi.resp" "$work/redis.resp" <<'EOF'
import random, sys
n, mi_path, redis_path = int(sys.argv[1]), sys.argv[2], sys.argv[3]
def cmd(*args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        a = a.encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)
rng = random.Random(42)
with open(mi_path, "wb") as mi, open(redis_path, "wb") as rd:
    mi.write(cmd("MI.CREATE", "users", "INDEX", "email", "email", "HASH", "UNIQUE",
                 "INDEX", "age", "age", "ORDERED", "NUMERIC"))
    for i in range(n):
        rid = "%012d" % i
        email, age = "user%s@example.com" % rid, str(rng.randint(18, 80))
        fields = ("email", email, "age", age, "name", "User %d" % i, "city", "city%d" % (i % 100))
        mi.write(cmd("MI.INSERT", "users", *fields))
        rd.write(cmd("HSET", "user:" + rid, *fields))
        rd.write(cmd("HSET", "users:email", email, rid))
        rd.write(cmd("ZADD", "users:age", age, rid))
EOF

# load PORT PID FILE -> "cpu_us_per_record bytes"
load() {
  local before after mem0
  mem0=$(used_memory "$1")
  before=$(cpu_ticks "$2")
  redis-cli -p "$1" --pipe <"$3" >"$work/pipe.log" || { cat "$work/pipe.log" >&2; exit 1; }
  after=$(cpu_ticks "$2")
  awk -v d=$((after - before)) -v t="$tck" -v n="$RECORDS" -v m=$(($(used_memory "$1") - mem0)) \
    'BEGIN { printf "%.2f %d\n", d / t * 1e6 / n, m }'
}
read -r redis_load redis_mem <<<"$(load "$REDIS_PORT" "$redis_pid" "$work/redis.resp")"
read -r vessel_load vessel_mem <<<"$(load "$VESSEL_PORT" "$vessel_pid" "$work/mi.resp")"
[ "$(redis-cli -p "$VESSEL_PORT" MI.CARD users)" = "$RECORDS" ] || { echo "vessel load failed" >&2; exit 1; }
[ "$(redis-cli -p "$REDIS_PORT" ZCARD users:age)" = "$RECORDS" ] || { echo "redis load failed" >&2; exit 1; }
# The measured commands answer what they should: one record by email, ten records by age.
[ "$(redis-cli -p "$VESSEL_PORT" MI.GET users email user000000000007@example.com | grep -c '^email$')" = 1 ] &&
[ "$(redis-cli -p "$VESSEL_PORT" MI.RANGE users age 30 31 LIMIT 0 10 | grep -c '^email$')" = 10 ] &&
[ "$(redis-cli -p "$REDIS_PORT" ZRANGEBYSCORE users:age 30 31 LIMIT 0 10 | wc -l)" = 10 ] ||
  { echo "unexpected replies" >&2; exit 1; }

# run_cell PORT PID CORE PIPELINE COMMAND... -> "rps cpu_us_per_op"
run_cell() {
  local port=$1 pid=$2 core=$3 pipeline=$4
  shift 4
  local before after rps
  before=$(cpu_ticks "$pid")
  rps=$(taskset -c "$core" redis-benchmark -p "$port" -n "$REQUESTS" -c "$CLIENTS" -P "$pipeline" \
          -r "$RECORDS" --csv "$@" 2>/dev/null | awk -F'","' 'NR==2 {print $2}')
  after=$(cpu_ticks "$pid")
  awk -v r="$rps" -v d=$((after - before)) -v t="$tck" -v n="$REQUESTS" \
    'BEGIN { printf "%.0f %.2f\n", r, d / t * 1e6 / n }'
}
redis_cell() { run_cell "$REDIS_PORT" "$redis_pid" "$VESSEL_CORE" "$@"; }
vessel_cell() { run_cell "$VESSEL_PORT" "$vessel_pid" "$REDIS_CORE" "$@"; }

# row NAME PIPELINE "redis_rps redis_cpu" "vessel_rps vessel_cpu"
row() {
  read -r rr rc <<<"$3"
  read -r vr vc <<<"$4"
  awk -v n="$1" -v p="$2" -v rr="$rr" -v rc="$rc" -v vr="$vr" -v vc="$vc" 'BEGIN {
    printf "%-14s %3s %12.0f %12.0f %7.2f %12.2f %12.2f %9.2f\n", n, p, rr, vr,
           (rr > 0 ? vr / rr : 0), rc, vc, (vc > 0 ? rc / vc : 0) }'
}
# combine "rps cpu" COUNT "rps cpu" COUNT ... -> the logical op's "rps cpu"
combine() {
  awk -v spec="$*" 'BEGIN {
    k = split(spec, a, " ")
    for (i = 1; i <= k; i += 3) { if (a[i] > 0) t += a[i + 2] / a[i]; c += a[i + 2] * a[i + 1] }
    printf "%.0f %.2f\n", (t > 0 ? 1 / t : 0), c }'
}

echo "records=$RECORDS clients=$CLIENTS requests/cell=$REQUESTS (redis: the logical op combined from its commands)"
series="redis-server 7.0.15, kept by hand|vessel multi_index"
method="bench/multi_index_compare.sh: $RECORDS records, each server on its own core (vessel --threads 1), redis-benchmark -c $CLIENTS on the other core; a Redis operation is the sum of its commands' cells"
chart_begin cpu-multi_index "multi_index against the same data kept by hand in Redis" \
  "server CPU µs per logical operation" "$method" "$series"
printf '%-14s %3s %12s %12s %7s %12s %12s %9s\n' op -P redis_rps vessel_rps ratio \
  redis_us/op vessel_us/op cpu_r/v
components=""
for p in $PIPELINES; do
  hget=$(redis_cell "$p" HGET users:email user__rand_int__@example.com)
  hgetall=$(redis_cell "$p" HGETALL user:__rand_int__)
  zrange=$(redis_cell "$p" ZRANGEBYSCORE users:age 30 31 LIMIT 0 10)
  mi_get=$(vessel_cell "$p" MI.GET users email user__rand_int__@example.com)
  mi_range=$(vessel_cell "$p" MI.RANGE users age 30 31 LIMIT 0 10)
  get_r=$(combine "$hget" 1 "$hgetall" 1)
  range_r=$(combine "$zrange" 1 "$hgetall" 10)
  row get-by-email "$p" "$get_r" "$mi_get"
  row range-age "$p" "$range_r" "$mi_range"
  chart_row cpu-multi_index "get by email, -P $p" "${get_r#* }" "${mi_get#* }"
  chart_row cpu-multi_index "age range LIMIT 10, -P $p" "${range_r#* }" "${mi_range#* }"
  components+="  -P $p redis: HGET $hget, HGETALL $hgetall, ZRANGEBYSCORE $zrange (rps us/op)"$'\n'
done
awk -v r="$redis_load" -v v="$vessel_load" 'BEGIN {
  printf "%-14s %3s %12s %12s %7s %12.2f %12.2f %9.2f\n", "load/record", "-", "-", "-", "-", r, v,
         (v > 0 ? r / v : 0) }'
awk -v r="$redis_mem" -v v="$vessel_mem" -v n="$RECORDS" 'BEGIN {
  printf "memory after load: redis %.1f MiB (%.0f B/record), vessel %.1f MiB (%.0f B/record)\n",
         r / 1048576, r / n, v / 1048576, v / n }'
printf "%s" "$components"
chart_row cpu-multi_index "load one record" "$redis_load" "$vessel_load"
chart_draw cpu-multi_index
chart_begin memory-multi_index "Memory per record: multi_index against the same data kept by hand" \
  "bytes per record (used_memory growth)" \
  "bench/multi_index_compare.sh: $RECORDS records {email, age, name, city}; INFO used_memory before and after loading" \
  "$series"
chart_row memory-multi_index "user record" "$((redis_mem / RECORDS))" "$((vessel_mem / RECORDS))"
chart_draw memory-multi_index
