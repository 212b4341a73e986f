#!/usr/bin/env bash
# Streams, bitmaps, HyperLogLog and EVALSHA of a small script against redis-server, side by side in one run: redis-benchmark
# runs each command (XADD, XRANGE and XREAD reads, SETBIT, PFADD,
# EVALSHA of a two-command script) against Sluice and Redis in
# alternating order, without pipelining (-n N) and with -P 16 (-n NP), ROUNDS times; prints the
# median requests/s of each, the ratio Sluice/Redis, server CPU per request, and the geometric
# means per pipeline depth.
#
#   crates/resp/bench/types.sh                    # ROUNDS=3 N=50000 NP=200000 CLIENTS=50
#   ROUNDS=5 crates/resp/bench/types.sh
#   FLOOR=1 crates/resp/bench/types.sh           # also a second redis-server: the noise floor
set -euo pipefail

ROUNDS=${ROUNDS:-3}
N=${N:-50000}
NP=${NP:-200000}
CLIENTS=${CLIENTS:-50}
# shellcheck source=common.sh
source "$(dirname "$0")/common.sh" redis-server redis-benchmark redis-cli
read -r -a EXTRA <<<"${SLUICE_ARGS:-}"
SLUICE_LOG=warn "$SLUICE_BIN" serve --resp "127.0.0.1:$SP" "${EXTRA[@]}" &
SLUICE_PID=$!
start_redis "$RP"
REDIS_PID=$!
R2P=""; REDIS2_PID=""
if [[ -n "${FLOOR:-}" ]]; then
  R2P=$(free_port)
  start_redis "$R2P"
  REDIS2_PID=$!
fi
trap 'kill $SLUICE_PID $REDIS_PID $REDIS2_PID 2>/dev/null; wait 2>/dev/null' EXIT
# shellcheck disable=SC2086
wait_until_serving "$SP" "$RP" $R2P

# A small script as job queues and rate limiters run them: a write and a read of one key.
EVAL_SCRIPT="redis.call('INCRBY', KEYS[1], ARGV[1]) return redis.call('GET', KEYS[1])"
EVAL_SHA=$(redis-cli -p "$SP" script load "$EVAL_SCRIPT")
[[ "$(redis-cli -p "$RP" script load "$EVAL_SCRIPT")" == "$EVAL_SHA" ]] || { echo "SCRIPT LOAD differs" >&2; exit 1; }
if [[ -n "$R2P" ]]; then redis-cli -p "$R2P" script load "$EVAL_SCRIPT" >/dev/null; fi

# name|command (redis-benchmark's trailing `CMD args` form; __rand_int__ draws from -r 1000000,
# zero-padded to 12 digits, so it serves as an element but not as a bit offset).
TESTS=(
  "XADD|XADD bench:stream * field value"
  "XRANGE|XRANGE bench:read - + COUNT 10"
  "XREAD|XREAD COUNT 10 STREAMS bench:read 0-0"
  "SETBIT|SETBIT bench:bits 1048575 1"
  "PFADD|PFADD bench:hll __rand_int__"
  "EVALSHA|EVALSHA $EVAL_SHA 1 bench:counter 1"
)

RESULTS=$(mktemp)
run() { # who port pipeline requests pid
  local t name cmd before after line
  for t in "${TESTS[@]}"; do
    name=${t%%|*}; cmd=${t#*|}
    before=$(cpu_ticks "$5")
    local argv
    set -f; read -r -a argv <<<"$cmd"; set +f
    line=$(redis-benchmark -p "$2" -q -n "$4" -c "$CLIENTS" -P "$3" -r 1000000 --csv "${argv[@]}" 2>/dev/null | tail -n 1 | tr -d '"' || true)
    after=$(cpu_ticks "$5")
    awk -F, -v who="$1" -v p="$3" -v n="$4" -v b="$before" -v a="$after" -v hz="$(getconf CLK_TCK)" -v name="$name" \
      '{ printf "%s|%s|%s|%s|%.3f\n", who, p, name, $2, (a - b) * 1e6 / hz / n }' <<<"$line" >>"$RESULTS"
  done
}

# The read tests read a 100-entry stream.
for port in "$SP" "$RP" $R2P; do
  redis-cli -p "$port" del bench:read >/dev/null
  for i in $(seq 100); do echo "XADD bench:read * field value-$i"; done | redis-cli -p "$port" >/dev/null
done

echo "types.sh: sluice serve ${EXTRA[*]}; machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GB; rounds=$ROUNDS n=$N n_pipelined=$NP clients=$CLIENTS" >&2
for round in $(seq "$ROUNDS"); do
  for p in 1 16; do
    n=$N; [[ $p -gt 1 ]] && n=$NP
    if (( round % 2 )); then run sluice "$SP" "$p" "$n" "$SLUICE_PID"; run redis "$RP" "$p" "$n" "$REDIS_PID"
    else run redis "$RP" "$p" "$n" "$REDIS_PID"; run sluice "$SP" "$p" "$n" "$SLUICE_PID"; fi
    if [[ -n "$R2P" ]]; then run redis2 "$R2P" "$p" "$n" "$REDIS2_PID"; fi
  done
  echo "round $round done" >&2
done

python3 - "$RESULTS" <<'PY'
import statistics, sys
from collections import defaultdict
runs, cpu, order = defaultdict(list), defaultdict(list), []
for line in open(sys.argv[1]):
    who, p, test, rps, us = line.strip().split("|")
    if (test, p) not in order:
        order.append((test, p))
    runs[(who, p, test)].append(float(rps))
    cpu[(who, p, test)].append(float(us))
med = lambda xs: statistics.median(xs) if xs else 0.0
floor = any(k[0] == "redis2" for k in runs)
extra = " second redis / redis |" if floor else ""
print("| test | pipe | sluice rps | redis rps | ratio | sluice us CPU/req | redis us CPU/req |" + extra)
print("|---|---|---|---|---|---|---|" + ("---|" if floor else ""))
by_pipe, floor_by_pipe = defaultdict(list), defaultdict(list)
for test, p in order:
    s, r = med(runs[("sluice", p, test)]), med(runs[("redis", p, test)])
    ratio = s / r if r else 0
    by_pipe[p].append(ratio)
    cell = ""
    if floor:
        f = med(runs[("redis2", p, test)]) / r if r else 0
        floor_by_pipe[p].append(f)
        cell = f" {f:.2f} |"
    print(f"| {test} | {p} | {s:.0f} | {r:.0f} | {ratio:.2f} | {med(cpu[('sluice', p, test)]):.2f} | {med(cpu[('redis', p, test)]):.2f} |{cell}")
for p, ratios in by_pipe.items():
    line = f"geometric mean at -P {p}: {statistics.geometric_mean([x for x in ratios if x > 0]):.2f}; lowest {min(ratios):.2f}"
    if floor:
        fl = floor_by_pipe[p]
        line += f" (second redis-server: {statistics.geometric_mean([x for x in fl if x > 0]):.2f}; lowest {min(fl):.2f})"
    print(line)
PY
rm -f "$RESULTS"
