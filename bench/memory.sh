#!/usr/bin/env bash
# Memory per key (or per element), redis-server against vessel-server, from the servers' RSS.
#
# For every case both servers start fresh, RSS (VmRSS in /proc/<pid>/status) is read, the data
# is loaded with redis-cli --pipe, and RSS is read again; the script prints the growth divided by
# the number of keys (strings) or elements (lists, sets; fields of hashes). Both run with defaults
# otherwise (vessel with one worker; redis-server without persistence).
#
#   bench/memory.sh                  # every case
#   CASES="str3 list" bench/memory.sh
#   CASES="zset_1m zset_10" bench/memory.sh   # one sorted set of 1M; 100,000 sets of 10
#   KEYS_N=2000000 bench/memory.sh
#   CASES="hash hash_int" bench/memory.sh   # KEYS_N hashes of 10 short fields each
#   CASES=hash_table bench/memory.sh         # CONTAINERS hashes of ELEMENTS fields (hashtables)
#   CASES=stream bench/memory.sh             # 100 streams of 10,000 two-field entries
#   CASES="deque deque100 deque300 deque1000 omap omap_hash bag multimap" bench/memory.sh
#                          # the containers against the Redis shape holding the same data: a list
#                          # (elements of 14, 100, 300, 1,000 bytes); a sorted set of the fields
#                          # (score 0) plus a hash of their values, or the hash alone; a sorted set
#                          # of counts; for a multimap's pairs, a sorted set of "field:n" plus a
#                          # hash of their values
#
# The figures of each family measured (strings, lists, sets, hashes, zsets, streams, containers)
# are also written to docs/img/memory-<family>.dat and drawn beside it as an SVG chart
# (bench/chart.sh; CHART_DIR and CHARTS=0 change that).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh bench
source bench/chart.sh

VESSEL=${VESSEL:-build/bin/vessel-server}
KEYS_N=${KEYS_N:-1000000}         # string keys per string case
CONTAINERS=${CONTAINERS:-1000}    # lists / sets per container case
ELEMENTS=${ELEMENTS:-1000}        # elements per list / set
CASES=${CASES:-str3 str20 str100 str256 list list3 set_str set_int hash hash_int hash_table zset_1m zset_10 stream deque deque100 deque300 deque1000 omap omap_hash bag multimap}
REDIS_PORT=${REDIS_PORT:-7385}
VESSEL_PORT=${VESSEL_PORT:-7386}

[ -x "$VESSEL" ] || { echo "build first: $VESSEL not found" >&2; exit 1; }
for port in "$REDIS_PORT" "$VESSEL_PORT"; do
  if redis-cli -p "$port" ping >/dev/null 2>&1; then
    echo "port $port is already in use: stop that server or set REDIS_PORT/VESSEL_PORT" >&2
    exit 1
  fi
done

# gen CASE SIDE: the RESP commands that load a case on SIDE (redis or vessel), on stdout; units
# CASE: how many keys or elements.
gen() {
  awk -v c="$1" -v side="$2" -v n="$KEYS_N" -v k="$CONTAINERS" -v e="$ELEMENTS" '
    function bulk(s) { printf "$%d\r\n%s\r\n", length(s), s }
    function strings(size,   i, v) {
      v = sprintf("%*s", size, ""); gsub(/ /, "v", v)
      for (i = 0; i < n; i++) { printf "*3\r\n"; bulk("SET"); bulk("key:" i); bulk(v) }
    }
    function containers(cmd, fmt,   i, j, m) {
      for (i = 0; i < k; i++) {
        for (j = 0; j < e; j += 100) {
          printf "*102\r\n"; bulk(cmd); bulk("c:" i)
          for (m = j; m < j + 100; m++) bulk(sprintf(fmt, m))
        }
      }
    }
    # KEYS_N hashes "h:N" of 10 fields "field0".."field9"; values "value-N" or the integer N.
    function hashes(numeric,   i, j, v) {
      for (i = 0; i < n; i++) {
        printf "*22\r\n"; bulk("HSET"); bulk("h:" i)
        for (j = 0; j < 10; j++) {
          v = numeric ? (i * 10 + j) "" : "value-" (i * 10 + j)
          bulk("field" j); bulk(v)
        }
      }
    }
    # CONTAINERS hashes of ELEMENTS fields "field-NNNNNN" -> "value-NNNNNN".
    function tables(   i, j, m) {
      for (i = 0; i < k; i++) {
        for (j = 0; j < e; j += 100) {
          printf "*202\r\n"; bulk("HSET"); bulk("t:" i)
          for (m = j; m < j + 100; m++) { bulk(sprintf("field-%06d", m)); bulk(sprintf("value-%06d", m)) }
        }
      }
    }
    # Sorted sets: member-%06d members with pseudo-random integer scores, 100 per ZADD.
    function zsets(keys, elems,   i, j, m, x) {
      for (i = 0; i < keys; i++) {
        for (j = 0; j < elems; j += 100) {
          m = (elems - j < 100) ? elems - j : 100
          printf "*%d\r\n", 2 + 2 * m; bulk("ZADD"); bulk("z:" i)
          for (x = j; x < j + m; x++) { bulk(sprintf("%d", (x * 7919) % 1000003)); bulk(sprintf("member-%06d", x)) }
        }
      }
    }
    # 100 streams of 10,000 entries "f1 <i> f2 v" with generated IDs.
    function streams(   i, j) {
      for (i = 0; i < 100; i++)
        for (j = 0; j < 10000; j++) {
          printf "*7\r\n"; bulk("XADD"); bulk("s:" i); bulk("*"); bulk("f1"); bulk(j ""); bulk("f2"); bulk("v")
        }
    }
    # CONTAINERS ordered maps of ELEMENTS fields "field-NNNNNN" -> "value-NNNNNN": one omap, or
    # (redis) a sorted set of the fields with score 0 plus a hash of the values (the hash alone
    # with hash_only: the same fields without their order).
    function omaps(hash_only,   i, j, m) {
      for (i = 0; i < k; i++) {
        for (j = 0; j < e; j += 100) {
          if (side == "vessel") { printf "*202\r\n"; bulk("OMAP.SET"); bulk("o:" i) }
          else { printf "*202\r\n"; bulk("HSET"); bulk("v:" i) }
          for (m = j; m < j + 100; m++) { bulk(sprintf("field-%06d", m)); bulk(sprintf("value-%06d", m)) }
          if (side == "vessel" || hash_only) continue
          printf "*202\r\n"; bulk("ZADD"); bulk("o:" i)
          for (m = j; m < j + 100; m++) { bulk("0"); bulk(sprintf("field-%06d", m)) }
        }
      }
    }
    # CONTAINERS bags of ELEMENTS members "member-NNNNNN" with counts 1..1000: a bag, or (redis) a
    # sorted set scored by count.
    function bags(   i, m, c) {
      for (i = 0; i < k; i++)
        for (m = 0; m < e; m++) {
          c = 1 + (m * 7919) % 1000 ""
          printf "*4\r\n"
          if (side == "vessel") { bulk("BAG.INCRBY"); bulk("b:" i); bulk(sprintf("member-%06d", m)); bulk(c) }
          else { bulk("ZADD"); bulk("b:" i); bulk(c); bulk(sprintf("member-%06d", m)) }
        }
    }
    # CONTAINERS multimaps of ELEMENTS pairs: ELEMENTS / 4 fields "field-NNNNNN" with four values
    # "value-NNNNNN" each: a multimap, or (redis) a sorted set of "field-NNNNNN:<n>" (score 0:
    # fields in order, then the values of each field in insertion order) plus a hash of the values.
    function multimaps(   i, j, m, f) {
      for (i = 0; i < k; i++)
        for (j = 0; j < e; j += 100) {
          if (side == "vessel") {
            printf "*202\r\n"; bulk("MMAP.ADD"); bulk("mm:" i)
            for (m = j; m < j + 100; m++) { bulk(sprintf("field-%06d", int(m / 4))); bulk(sprintf("value-%06d", m)) }
            continue
          }
          printf "*202\r\n"; bulk("HSET"); bulk("h:" i)
          for (m = j; m < j + 100; m++) { bulk(sprintf("field-%06d:%d", int(m / 4), m % 4)); bulk(sprintf("value-%06d", m)) }
          printf "*202\r\n"; bulk("ZADD"); bulk("z:" i)
          for (m = j; m < j + 100; m++) { bulk("0"); bulk(sprintf("field-%06d:%d", int(m / 4), m % 4)) }
        }
    }
    BEGIN {
      push = (side == "vessel") ? "DEQ.PUSHBACK" : "RPUSH"
      if (c == "stream") streams()
      else if (c == "deque") containers(push, "element-%06d")
      else if (c == "deque100") containers(push, "%0100d")
      else if (c == "deque300") containers(push, "%0300d")
      else if (c == "deque1000") containers(push, "%01000d")
      else if (c == "omap") omaps(0)
      else if (c == "omap_hash") omaps(1)
      else if (c == "bag") bags()
      else if (c == "multimap") multimaps()
      else if (c == "zset_1m") zsets(1, 1000000)
      else if (c == "zset_10") zsets(100000, 10)
      else if (c == "str3") strings(3)
      else if (c == "str20") strings(20)
      else if (c == "str100") strings(100)
      else if (c == "str256") strings(256)
      else if (c == "list3") containers("RPUSH", "%03d")
      else if (c == "list") containers("RPUSH", "element-%06d")
      else if (c == "set_str") containers("SADD", "member-%06d")
      else if (c == "set_int") containers("SADD", "%d")
      else if (c == "hash") hashes(0)
      else if (c == "hash_int") hashes(1)
      else if (c == "hash_table") tables()
    }'
}
units() {
  case $1 in
    stream) echo 1000000 ;;
    str*) echo "$KEYS_N" ;;
    hash | hash_int) echo $((KEYS_N * 10)) ;;
    zset_*) echo 1000000 ;;
    *) echo $((CONTAINERS * ELEMENTS)) ;;
  esac
}
# family CASE: the chart a case belongs to; describe CASE: its label there.
family() {
  case $1 in
    stream) echo streams ;; str*) echo strings ;; list*) echo lists ;; set_*) echo sets ;; hash*) echo hashes ;;
    zset_*) echo zsets ;; *) echo containers ;;
  esac
}
describe() {
  case $1 in
    stream) echo "100 streams of 10,000" ;;
    str*) echo "${1#str}-byte value" ;;
    list) echo "14-byte element" ;;
    list3) echo "3-digit number" ;;
    set_str) echo "13-byte member" ;;
    set_int) echo "integer member" ;;
    hash) echo "10-field hashes" ;;
    hash_int) echo "10 fields, integer values" ;;
    hash_table) echo "$ELEMENTS-field hashes" ;;
    zset_1m) echo "one set of 1M" ;;
    zset_10) echo "100,000 sets of 10" ;;
    deque) echo "deque: list, 14-byte elements" ;;
    deque100) echo "deque: list, 100-byte elements" ;;
    deque300) echo "deque: list, 300-byte elements" ;;
    deque1000) echo "deque: list, 1,000-byte elements" ;;
    omap) echo "omap: zset + hash" ;;
    omap_hash) echo "omap: hash alone" ;;
    bag) echo "bag: zset of counts" ;;
    multimap) echo "multimap: zset + hash" ;;
  esac
}
declare -A unit_name=([strings]=key [lists]=element [sets]=member [hashes]=field [zsets]=member
  [streams]=entry [containers]=element)
rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }
wait_up() { for _ in $(seq 100); do redis-cli -p "$1" ping >/dev/null 2>&1 && return; sleep 0.05; done; }

pids=()
trap 'kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null' EXIT
printf '%-8s %10s %14s %14s %7s\n' case units redis_B/unit vessel_B/unit ratio
charted=()
for c in $CASES; do
  f=$(family "$c")
  if [[ " ${charted[*]} " != *" $f "* ]]; then
    charted+=("$f")
    chart_begin "memory-$f" "Memory per ${unit_name[$f]}: $f" "bytes per ${unit_name[$f]} (RSS growth)" \
      "bench/memory.sh: each server started fresh (vessel --threads 1), RSS growth while loading with redis-cli --pipe, divided by the ${unit_name[$f]}s loaded"
  fi
  redis-server --port "$REDIS_PORT" --save '' --appendonly no --daemonize no \
    --logfile /dev/null &
  rp=$!
  "$VESSEL" --port "$VESSEL_PORT" --save "" --threads 1 --log-level warn &
  vp=$!
  pids=("$rp" "$vp")
  wait_up "$REDIS_PORT"
  wait_up "$VESSEL_PORT"
  u=$(units "$c")
  out=()
  for pair in "$REDIS_PORT:$rp" "$VESSEL_PORT:$vp"; do
    port=${pair%%:*} pid=${pair#*:}
    before=$(rss_kib "$pid")
    side=vessel
    [ "$port" = "$REDIS_PORT" ] && side=redis
    gen "$c" "$side" | redis-cli -p "$port" --pipe >/dev/null
    after=$(rss_kib "$pid")
    out+=("$(awk -v a="$after" -v b="$before" -v u="$u" 'BEGIN { printf "%.1f", (a - b) * 1024 / u }')")
  done
  kill "$rp" "$vp" 2>/dev/null
  wait "$rp" "$vp" 2>/dev/null || true
  printf '%-8s %10s %14s %14s %7s\n' "$c" "$u" "${out[0]}" "${out[1]}" \
    "$(awk -v v="${out[1]}" -v r="${out[0]}" 'BEGIN { printf "%.2f", v / r }')"
  chart_row "memory-$f" "$(describe "$c")" "${out[0]}" "${out[1]}"
done
for f in "${charted[@]}"; do chart_draw "memory-$f"; done
