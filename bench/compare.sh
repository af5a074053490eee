#!/usr/bin/env bash
# Side-by-side throughput of redis-server and vessel-server on this machine.
#
# Method (the per-core figure): both servers run pinned to the same core (SERVER_CORE; vessel with
# one worker thread), redis-benchmark pinned to the other (CLIENT_CORE), one server loaded at a
# time. Every cell runs ROUNDS times interleaved (redis, vessel, redis, vessel, ...) and prints
# medians: both servers' requests per second and their ratio, each server's CPU time per operation
# from /proc/<pid>/stat (stable on a noisy machine) and its ratio, and the benchmark client's own
# CPU use: a client at ~100 % of its core means the cell measures the client, not the server.
# The sys columns are the part of each server's CPU per operation spent in the kernel (socket
# receive and send, epoll): what a server's own code cannot save.
#
#   bench/compare.sh                          # SUITE=strings: SET GET INCR MSET, one hot key
#   SUITE=lists bench/compare.sh              # LPUSH RPUSH LPOP RPOP LRANGE_100/300/600
#   SUITE=sets bench/compare.sh               # SADD SPOP SISMEMBER SMEMBERS
#   SUITE=hashes bench/compare.sh             # HSET HGET HGETALL HINCRBY
#   SUITE=bitmaps bench/compare.sh            # BITCOUNT/BITOP on 1 MB, SETBIT, PFADD, PFCOUNT
#   SUITE=zsets bench/compare.sh              # ZADD ZINCRBY ZSCORE ZRANK ZRANGE_100 ZPOPMIN
#   SUITE=scripting bench/compare.sh          # EVALSHA and FCALL of a 3-command script
#   SUITE=streams bench/compare.sh            # XADD, XADD MAXLEN ~, XRANGE_100, XREADGROUP, XACK
#   SUITE=containers bench/compare.sh         # DEQ.*, OMAP.*, BAG.* against what Redis users
#                                             # build the same access from (LINDEX, ZRANGEBYLEX,
#                                             # ZINCRBY, ZREVRANGE ...): "redis cmd || vessel cmd"
#   SUITE="strings lists sets" PIPELINES="1 16" SECONDS_PER_CELL=3 ROUNDS=5 bench/compare.sh
#   TLS=1 bench/compare.sh                    # the same cells over TLS on both servers (client
#                                             # certificates; a CA and certificates made here)
#
# Each suite's CPU per operation at each pipeline depth is also written to
# docs/img/cpu-<suite>-p<P>.dat (cpu-<suite>-tls-p<P> with TLS=1) and drawn beside it as an SVG
# chart (bench/chart.sh; CHART_DIR and CHARTS=0 change that).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh bench
source bench/chart.sh

VESSEL=${VESSEL:-build/bin/vessel-server}
VESSEL_ARGS=${VESSEL_ARGS:-}  # extra flags for vessel-server, e.g. --config FILE
SUITE=${SUITE:-strings}
PIPELINES=${PIPELINES:-1 16}
CLIENTS=${CLIENTS:-50}
KEYSPACE=${KEYSPACE:-100000}
SECONDS_PER_CELL=${SECONDS_PER_CELL:-2}
ROUNDS=${ROUNDS:-3}
SERVER_CORE=${SERVER_CORE:-0}
CLIENT_CORE=${CLIENT_CORE:-1}
REDIS_PORT=${REDIS_PORT:-7380}
VESSEL_PORT=${VESSEL_PORT:-7381}
TLS=${TLS:-0}
REDIS_TLS_PORT=${REDIS_TLS_PORT:-7382}
VESSEL_TLS_PORT=${VESSEL_TLS_PORT:-7383}

# A cell: a label, then the redis-benchmark arguments that select the work.
# SET_HOT/GET_HOT/INCR_HOT hit one key from every client.
cells_strings=("SET|-t set" "GET|-t get" "INCR|-t incr" "MSET|-t mset" "SET_HOT|SET hot v"
  "GET_HOT|GET hot" "INCR_HOT|INCR hotcounter")
# LRANGE_N reads the first N elements of a 600-element list, as redis-benchmark's lrange_N tests
# do (run here without their LPUSH warm-up row); SPOP pops from a 300,000-member set refilled
# before each measurement, at most that many requests, so no pop finds it empty.
cells_lists=("LPUSH|-t lpush" "RPUSH|-t rpush" "LPOP|-t lpop" "RPOP|-t rpop"
  "LRANGE_100|LRANGE biglist 0 99" "LRANGE_300|LRANGE biglist 0 299"
  "LRANGE_600|LRANGE biglist 0 599")
cells_sets=("SADD|-t sadd" "SPOP|SPOP popset" "SISMEMBER|SISMEMBER smallset m__rand_int__"
  "SMEMBERS|SMEMBERS smallset")
SPOP_MEMBERS=300000
# HSET adds fields to one large hash (redis-benchmark's hset test: a hashtable), HGET reads it;
# HGETALL reads a 10-field hash; HINCRBY counts in 100,000 one-field (compact) hashes.
cells_hashes=("HSET|-t hset" "HGET|HGET myhash element:__rand_int__" "HGETALL|HGETALL smallhash"
  "HINCRBY|HINCRBY counter:__rand_int__ hits 1")
# BITCOUNT/BITOP read 1 MiB random values (bitmap1mb, bitmap1mb2); PFCOUNT of two keys merges two
# dense HyperLogLogs of 100,000 elements each (nothing is cached with several keys).
cells_bitmaps=("BITCOUNT_1MB|BITCOUNT bitmap1mb" "BITOP_AND_1MB|BITOP AND bitopdest bitmap1mb bitmap1mb2"
  "SETBIT|SETBIT bits:__rand_int__ 7 1" "GETBIT|GETBIT bitmap1mb 4000000"
  "PFADD|PFADD hll:__rand_int__ a b c" "PFCOUNT_2|PFCOUNT hll hll2")
# ZADD adds to (and ZINCRBY updates) members of a 100,000-member leaderboard, random ones each
# request; ZSCORE, ZRANK and ZRANGE read it; ZPOPMIN pops from a 300,000-member set refilled
# before each measurement, as SPOP.
cells_zsets=("ZADD|ZADD zadd __rand_int__ m:__rand_int__"
  "ZINCRBY|ZINCRBY board 1 player:__rand_int__" "ZSCORE|ZSCORE board player:__rand_int__"
  "ZRANK|ZRANK board player:__rand_int__" "ZRANGE_100|ZRANGE board 0 99 WITHSCORES"
  "ZPOPMIN|ZPOPMIN popz")
BOARD_MEMBERS=100000
# A 3-command script (INCR, SET, GET on two declared keys) run by EVALSHA, and the same body as a
# function run by FCALL; both are loaded on the two servers before the cells run.
SCRIPT3="redis.call('incr', KEYS[1]) redis.call('set', KEYS[2], ARGV[1]) return redis.call('get', KEYS[1])"
SCRIPT3_SHA=$(printf '%s' "$SCRIPT3" | sha1sum | cut -c1-40)
cells_scripting=("EVALSHA_3|EVALSHA $SCRIPT3_SHA 2 cnt:__rand_int__ val:__rand_int__ x"
  "FCALL_3|FCALL three 2 cnt:__rand_int__ val:__rand_int__ x")
# Streams: XADD appends to one stream (and to a stream capped near 1,000 entries); XRANGE_100
# reads 100 entries from a random point of a 100,000-entry stream (IDs 1-1 .. 100000-1);
# XREADGROUP reads one new entry per call for one consumer of a group on that stream (the group is
# made anew before each measurement, at most STREAM_ENTRIES calls); XACK acknowledges random IDs.
cells_streams=("XADD|XADD events * field value" "XADD_MAXLEN|XADD capped MAXLEN ~ 1000 * field value"
  "XRANGE_100|XRANGE bigstream __rand_int__ + COUNT 100"
  "XREADGROUP|XREADGROUP GROUP g c COUNT 1 STREAMS bigstream >"
  "XACK|XACK bigstream g __rand_int__-1")
STREAM_ENTRIES=100000
# Containers: a cell "LABEL|redis command||vessel command" runs the first on redis-server and the
# second on vessel; "A && B" on the redis side is what a Redis user sends for one lookup (two
# round trips: the lex index, then the values), measured as two runs of the same number of
# requests whose CPU times add up (rps: one over the sum of the two times per request). The data:
# a 1,000,000-element list / deque (seq), 100,000 fields kept by Redis users as a sorted set of
# names with score 0 plus a hash of values (idx + vals) and by vessel as one omap (om), and
# 100,000 counted members as a sorted set / a bag (counts). The HMGET after a ZRANGEBYLEX asks for
# ten random fields (redis-benchmark cannot pass one reply into the next command).
cells_containers=("DEQ_INDEX|LINDEX seq 500000||DEQ.INDEX seq 500000"
  "DEQ_PUSHBACK|RPUSH q element||DEQ.PUSHBACK q element"
  "DEQ_RANGE_100|LRANGE seq 500000 500099||DEQ.RANGE seq 500000 500099"
  "OMAP_GET|HGET vals field:__rand_int__||OMAP.GET om field:__rand_int__"
  "OMAP_FLOOR|ZREVRANGEBYLEX idx [field:__rand_int__ - LIMIT 0 1 && HGET vals field:__rand_int__||OMAP.FLOOR om field:__rand_int__"
  "OMAP_RANGE_10|ZRANGEBYLEX idx [field:__rand_int__ + LIMIT 0 10 && HMGET vals field:__rand_int__ field:__rand_int__ field:__rand_int__ field:__rand_int__ field:__rand_int__ field:__rand_int__ field:__rand_int__ field:__rand_int__ field:__rand_int__ field:__rand_int__||OMAP.RANGE om [field:__rand_int__ + LIMIT 0 10"
  "BAG_INCRBY|ZINCRBY counts 1 m:__rand_int__||BAG.INCRBY counts m:__rand_int__ 1"
  "BAG_TOP_10|ZREVRANGE counts 0 9 WITHSCORES||BAG.TOP counts 10")
CONTAINER_ELEMENTS=100000
DEQUE_ELEMENTS=1000000

# pipe_fill PORT COMMAND KEY N KIND: N elements added to KEY by COMMAND, 1000 per command (XADD:
# one each). KIND says what an element is, <i> with 12 digits as __rand_int__ writes it:
# "elem" element:<i>; "field" field:<i> value:<i>; "zero" 0 field:<i>; "score" <count> m:<i>;
# "id" the entry <i+1>-1 with field value.
pipe_fill() {
  redis-cli -p "$1" DEL "$3" >/dev/null
  awk -v cmd="$2" -v key="$3" -v n="$4" -v kind="$5" 'BEGIN {
    for (i = 0; i < n; i += 1000) {
      m = (n - i < 1000) ? n - i : 1000
      if (kind == "id") {  # one entry per XADD
        for (j = i; j < i + m; j++) {
          id = (j + 1) "-1"
          printf "*5\r\n$4\r\nXADD\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n$5\r\nfield\r\n$5\r\nvalue\r\n", length(key), key, length(id), id
        }
        continue
      }
      per = (kind == "elem") ? 1 : 2
      printf "*%d\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n", m * per + 2, length(cmd), cmd, length(key), key
      for (j = i; j < i + m; j++) {
        f = sprintf("field:%012d", j); c = 1 + (j * 7919) % 1000 ""
        if (kind == "elem") { e = "element:" j; printf "$%d\r\n%s\r\n", length(e), e }
        else if (kind == "field") { v = "value:" j; printf "$%d\r\n%s\r\n$%d\r\n%s\r\n", length(f), f, length(v), v }
        else if (kind == "zero") printf "$1\r\n0\r\n$%d\r\n%s\r\n", length(f), f
        else { mm = sprintf("m:%012d", j)
               printf "$%d\r\n%s\r\n$%d\r\n%s\r\n", length(c), c, length(mm), mm }
      }
    }
  }' | redis-cli -p "$1" --pipe >/dev/null
}

# fill_containers PORT SIDE: the containers suite's data on one server (SIDE redis or vessel).
fill_containers() {
  local n=$CONTAINER_ELEMENTS
  if [ "$2" = redis ]; then
    pipe_fill "$1" RPUSH seq "$DEQUE_ELEMENTS" elem
    pipe_fill "$1" ZADD idx "$n" zero
    pipe_fill "$1" HSET vals "$n" field
    pipe_fill "$1" ZADD counts "$n" score
  else
    pipe_fill "$1" DEQ.PUSHBACK seq "$DEQUE_ELEMENTS" elem
    pipe_fill "$1" OMAP.SET om "$n" field
    # BAG.INCRBY takes one member: the sorted set's counts go in one BAG.INCRBY each.
    redis-cli -p "$1" DEL counts >/dev/null
    awk -v n="$n" 'BEGIN {
      for (j = 0; j < n; j++) {
        mm = sprintf("m:%012d", j); c = 1 + (j * 7919) % 1000 ""
        printf "*4\r\n$10\r\nBAG.INCRBY\r\n$6\r\ncounts\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n", length(mm), mm, length(c), c
      }
    }' | redis-cli -p "$1" --pipe >/dev/null
  fi
}

# fill_zset PORT KEY N PREFIX: N members PREFIX000000000000.. with pseudo-random scores in KEY.
fill_zset() {
  redis-cli -p "$1" DEL "$2" >/dev/null
  awk -v key="$2" -v n="$3" -v p="$4" 'BEGIN {
    for (i = 0; i < n; i += 1000) {
      printf "*2002\r\n$4\r\nZADD\r\n$%d\r\n%s\r\n", length(key), key
      for (j = i; j < i + 1000; j++) {
        s = (j * 7919) % 1000003; m = sprintf("%s%012d", p, j)  # as __rand_int__ writes it
        printf "$%d\r\n%d\r\n$%d\r\n%s\r\n", length(s ""), s, length(m), m
      }
    }
  }' | redis-cli -p "$1" --pipe >/dev/null
}

[ -x "$VESSEL" ] || { echo "build first: $VESSEL not found" >&2; exit 1; }
for port in "$REDIS_PORT" "$VESSEL_PORT"; do
  if redis-cli -p "$port" ping >/dev/null 2>&1; then
    echo "port $port is already in use: stop that server or set REDIS_PORT/VESSEL_PORT" >&2
    exit 1
  fi
done
tck=$(getconf CLK_TCK)

# TLS=1: a CA, a server and a client certificate for this run; both servers listen on a TLS port
# beside their plain one (used to load data), and redis-benchmark talks TLS.
redis_tls=() vessel_tls=() bench_tls=()
if [ "$TLS" = 1 ]; then
  tls_dir=$(mktemp -d)
  (
    cd "$tls_dir"
    openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=bench-ca -keyout ca.key \
      -out ca.crt
    for name in server client; do
      openssl req -newkey rsa:2048 -nodes -subj /CN=localhost -keyout $name.key -out $name.csr
      printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' >ext.cnf
      openssl x509 -req -in $name.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 1 \
        -extfile ext.cnf -out $name.crt
    done
  ) >/dev/null 2>&1
  files=(--tls-cert-file "$tls_dir/server.crt" --tls-key-file "$tls_dir/server.key"
    --tls-ca-cert-file "$tls_dir/ca.crt")
  redis_tls=(--tls-port "$REDIS_TLS_PORT" "${files[@]}")
  vessel_tls=(--tls-port "$VESSEL_TLS_PORT" "${files[@]}")
  bench_tls=(--tls --cacert "$tls_dir/ca.crt" --cert "$tls_dir/client.crt"
    --key "$tls_dir/client.key")
fi

taskset -c "$SERVER_CORE" redis-server --port "$REDIS_PORT" --save '' --appendonly no \
  --daemonize no --logfile /dev/null "${redis_tls[@]}" &
redis_pid=$!
# shellcheck disable=SC2086
taskset -c "$SERVER_CORE" "$VESSEL" --port "$VESSEL_PORT" --save "" --threads 1 --log-level warn \
  "${vessel_tls[@]}" $VESSEL_ARGS &
vessel_pid=$!
trap 'kill $redis_pid $vessel_pid 2>/dev/null; wait 2>/dev/null; [ -n "${tls_dir:-}" ] && rm -rf "$tls_dir"' EXIT
for port in "$REDIS_PORT" "$VESSEL_PORT"; do
  for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.05; done
  # SISMEMBER/SMEMBERS read a 100-member set, LRANGE a 600-element list, HGETALL a 10-field hash.
  redis-cli -p "$port" DEL smallset biglist smallhash >/dev/null
  # shellcheck disable=SC2046
  redis-cli -p "$port" SADD smallset $(seq -f 'm%g' 0 99) >/dev/null
  # shellcheck disable=SC2046
  redis-cli -p "$port" RPUSH biglist $(seq -f 'element-%g' 0 599) >/dev/null
  # shellcheck disable=SC2046
  redis-cli -p "$port" HSET smallhash $(seq -f 'field%g value' 0 9) >/dev/null
  [[ " $SUITE " == *" zsets "* ]] && fill_zset "$port" board "$BOARD_MEMBERS" player:
  [[ " $SUITE " == *" streams "* ]] && pipe_fill "$port" XADD bigstream "$STREAM_ENTRIES" id
  if [[ " $SUITE " == *" containers "* ]]; then
    if [ "$port" = "$REDIS_PORT" ]; then fill_containers "$port" redis; else fill_containers "$port" vessel; fi
  fi
  if [[ " $SUITE " == *" scripting "* ]]; then
    redis-cli -p "$port" SCRIPT LOAD "$SCRIPT3" >/dev/null
    redis-cli -p "$port" FUNCTION LOAD REPLACE "#!lua name=bench
redis.register_function('three', function(KEYS, ARGV) $SCRIPT3 end)" >/dev/null
  fi
done

# fill_bitmaps PORT: the values of the bitmaps suite (the same bytes on both servers).
fill_bitmaps() {
  head -c 1048576 "$bitmap_file" | redis-cli -p "$1" -x SET bitmap1mb >/dev/null
  tail -c 1048576 "$bitmap_file" | redis-cli -p "$1" -x SET bitmap1mb2 >/dev/null
  for key in hll hll2; do
    redis-cli -p "$1" DEL "$key" >/dev/null
    awk -v key="$key" 'BEGIN {
      for (i = 0; i < 100000; i += 1000) {
        printf "*1002\r\n$5\r\nPFADD\r\n$%d\r\n%s\r\n", length(key), key
        for (j = i; j < i + 1000; j++) { m = key ":" j; printf "$%d\r\n%s\r\n", length(m), m }
      }
    }' | redis-cli -p "$1" --pipe >/dev/null
  done
}
if [[ " $SUITE " == *" bitmaps "* ]]; then
  bitmap_file=$(mktemp)
  head -c 2097152 /dev/urandom >"$bitmap_file"
  fill_bitmaps "$REDIS_PORT"
  fill_bitmaps "$VESSEL_PORT"
  rm -f "$bitmap_file"
fi

# fill_popset PORT: SPOP_MEMBERS members in popset.
fill_popset() {
  redis-cli -p "$1" DEL popset >/dev/null
  awk -v n="$SPOP_MEMBERS" 'BEGIN {
    for (i = 0; i < n; i += 1000) {
      printf "*1002\r\n$4\r\nSADD\r\n$6\r\npopset\r\n"
      for (j = i; j < i + 1000; j++) { m = "member:" j; printf "$%d\r\n%s\r\n", length(m), m }
    }
  }' | redis-cli -p "$1" --pipe >/dev/null
}

# user and system clock ticks of a process
cpu_ticks() { awk '{print $14, $15}' "/proc/$1/stat"; }

# run_cell PORT PID PIPELINE REQUESTS ARGS...
#   -> "rps server_cpu_us_per_op client_cpu_percent server_system_us_per_op"
run_cell() {
  local port=$1 pid=$2 pipeline=$3 n=$4
  shift 4
  local u0 s0 u1 s1 out
  if [ "$TLS" = 1 ]; then
    [ "$port" = "$REDIS_PORT" ] && port=$REDIS_TLS_PORT || port=$VESSEL_TLS_PORT
  fi
  read -r u0 s0 <<<"$(cpu_ticks "$pid")"
  # bash's `time` reports the client's own user+system time beside the wall time.
  out=$( { TIMEFORMAT='%R %U %S'; time taskset -c "$CLIENT_CORE" redis-benchmark -p "$port" \
             "${bench_tls[@]}" -n "$n" -c "$CLIENTS" -P "$pipeline" -r "$KEYSPACE" --csv "$@" \
             2>/dev/null | awk -F'","' 'NR > 1 {r = $2} END {print r}'; } 2>&1)
  read -r u1 s1 <<<"$(cpu_ticks "$pid")"
  awk -v o="$out" -v d=$((u1 - u0 + s1 - s0)) -v k=$((s1 - s0)) -v t="$tck" -v n="$n" 'BEGIN {
    split(o, f, /[ \n]+/)  # rps, wall seconds, user seconds, system seconds
    printf "%.0f %.2f %.0f %.2f\n", f[1], d / t * 1e6 / n,
      (f[2] > 0 ? (f[3] + f[4]) / f[2] * 100 : 0), k / t * 1e6 / n
  }'
}

median() { printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }

printf '%-15s %3s %11s %11s %6s %11s %11s %6s %8s %8s %9s %9s\n' test -P redis_rps vessel_rps \
  ratio redis_us/op vessel_us/op cpu_r client_r client_v redis_sys vessel_sys
tls_tag=""
[ "$TLS" = 1 ] && tls_tag="-tls"
for suite in $SUITE; do
  declare -n cells="cells_$suite"
  for p in $PIPELINES; do
    chart_begin "cpu-$suite$tls_tag-p$p" \
      "Server CPU time per operation: $suite, -P $p${tls_tag:+, over TLS}" \
      "server CPU µs per operation" \
      "bench/compare.sh (SUITE=$suite): both servers on core $SERVER_CORE (vessel --threads 1), redis-benchmark -c $CLIENTS -r $KEYSPACE -P $p on core $CLIENT_CORE, $ROUNDS interleaved rounds, medians"
  done
  for cell in "${cells[@]}"; do
    label=${cell%%|*}
    # "redis args||vessel args", or the same args for both
    spec=${cell#*|}
    rspec2=""
    if [[ "$spec" == *"||"* ]]; then
      rspec=${spec%%||*}
      if [[ "$rspec" == *" && "* ]]; then
        rspec2=${rspec#* && }
        rspec=${rspec%% && *}
      fi
      read -ra args <<<"$rspec"
      read -ra args2 <<<"$rspec2"
      read -ra vargs <<<"${spec#*||}"
    else
      read -ra args <<<"$spec"
      vargs=("${args[@]}")
    fi
    for p in $PIPELINES; do
      # Calibrate on redis so that each run lasts about SECONDS_PER_CELL seconds.
      probe=$(run_cell "$REDIS_PORT" "$redis_pid" "$p" 20000 "${args[@]}")
      n=$(( ${probe%% *} * SECONDS_PER_CELL ))
      [ "$n" -lt 20000 ] && n=20000
      { [ "$label" = SPOP ] || [ "$label" = ZPOPMIN ]; } && [ "$n" -gt "$SPOP_MEMBERS" ] &&
        n=$SPOP_MEMBERS
      [ "$label" = XREADGROUP ] && [ "$n" -gt "$STREAM_ENTRIES" ] && n=$STREAM_ENTRIES
      rr=() rc=() rk=() rs=() vr=() vc=() vk=() vs=()
      for _ in $(seq "$ROUNDS"); do
        for s in redis vessel; do
          if [ "$s" = redis ]; then port=$REDIS_PORT pid=$redis_pid; else port=$VESSEL_PORT pid=$vessel_pid; fi
          [ "$label" = SPOP ] && fill_popset "$port"
          [ "$label" = ZPOPMIN ] && fill_zset "$port" popz "$SPOP_MEMBERS" m:
          if [ "$label" = XREADGROUP ]; then
            redis-cli -p "$port" XGROUP DESTROY bigstream g >/dev/null
            redis-cli -p "$port" XGROUP CREATE bigstream g 0 >/dev/null
          fi
          if [ "$s" = redis ]; then
            read -r r c k y <<<"$(run_cell "$port" "$pid" "$p" "$n" "${args[@]}")"
            if [ -n "$rspec2" ]; then  # the second round trip of the same lookups
              read -r r2 c2 k2 y2 <<<"$(run_cell "$port" "$pid" "$p" "$n" "${args2[@]}")"
              read -r r c k y <<<"$(awk -v r="$r" -v c="$c" -v k="$k" -v y="$y" -v r2="$r2" \
                -v c2="$c2" -v k2="$k2" -v y2="$y2" 'BEGIN {
                  printf "%.0f %.2f %.0f %.2f\n", (r > 0 && r2 > 0 ? 1 / (1 / r + 1 / r2) : 0),
                    c + c2, (k + k2) / 2, y + y2 }')"
            fi
          else
            read -r r c k y <<<"$(run_cell "$port" "$pid" "$p" "$n" "${vargs[@]}")"
          fi
          if [ "$s" = redis ]; then
            rr+=("$r") rc+=("$c") rk+=("$k") rs+=("$y")
          else
            vr+=("$r") vc+=("$c") vk+=("$k") vs+=("$y")
          fi
        done
      done
      r_rps=$(median "${rr[@]}") v_rps=$(median "${vr[@]}")
      r_cpu=$(median "${rc[@]}") v_cpu=$(median "${vc[@]}")
      printf '%-15s %3s %11s %11s %6s %11s %11s %6s %7s%% %7s%% %9s %9s\n' "$label" "$p" "$r_rps" \
        "$v_rps" \
        "$(awk -v a="$v_rps" -v b="$r_rps" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')" \
        "$r_cpu" "$v_cpu" \
        "$(awk -v a="$v_cpu" -v b="$r_cpu" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')" \
        "$(median "${rk[@]}")" "$(median "${vk[@]}")" "$(median "${rs[@]}")" "$(median "${vs[@]}")"
      chart_row "cpu-$suite$tls_tag-p$p" "$label" "$r_cpu" "$v_cpu"
    done
  done
  for p in $PIPELINES; do chart_draw "cpu-$suite$tls_tag-p$p"; done
  unset -n cells
done
