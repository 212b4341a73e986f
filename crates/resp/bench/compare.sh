#!/usr/bin/env bash
# Sluice's Redis gate against redis-server on this machine, side by side in one run:
# redis-benchmark alternates A/B per test, with and without pipelining, repeated ROUNDS times;
# prints the median requests/s of each and the ratio Sluice/Redis.
#
#   crates/resp/bench/compare.sh            # defaults: ROUNDS=3 N=50000 NP=200000 CLIENTS=50
#   ROUNDS=5 N=100000 crates/resp/bench/compare.sh
#   THREADS=1 crates/resp/bench/compare.sh  # Sluice's runtime worker threads (default: cores)
#   SLUICE_ARGS="--resp-io-threads 2" crates/resp/bench/compare.sh
set -euo pipefail

ROUNDS=${ROUNDS:-3}
N=${N:-50000}          # requests per test without pipelining
NP=${NP:-200000}       # requests per test with -P 16
CLIENTS=${CLIENTS:-50}
TESTS=${TESTS:-ping_inline,ping_mbulk,set,get,incr,lpush,rpush,lpop,rpop,sadd,hset,spop,zadd,zpopmin,lrange_100,mset}
# shellcheck source=common.sh
source "$(dirname "$0")/common.sh" redis-server redis-benchmark redis-cli
# SLUICE_ARGS: extra `sluice serve` options, e.g. "--threads 1 --resp-io-threads 2".
read -r -a EXTRA <<<"${SLUICE_ARGS:-}"
[[ -n "${THREADS:-}" ]] && EXTRA+=(--threads "$THREADS")
SLUICE_LOG=warn "$SLUICE_BIN" serve --resp "127.0.0.1:$SP" "${EXTRA[@]}" &
SLUICE_PID=$!
start_redis "$RP"
REDIS_PID=$!
trap 'kill $SLUICE_PID $REDIS_PID 2>/dev/null; wait 2>/dev/null' EXIT
wait_until_serving "$SP" "$RP"

RESULTS=$(mktemp)
# Server CPU time (user+system, clock ticks) so the table can show CPU per request, which a
# noisy shared machine disturbs far less than throughput.
run() { # name port pipeline requests pid
  local t
  redis-cli -p "$2" flushall >/dev/null
  for t in ${TESTS//,/ }; do
    local before after line
    before=$(cpu_ticks "$5")
    line=$(redis-benchmark -p "$2" -q -n "$4" -c "$CLIENTS" -P "$3" -t "$t" --csv 2>/dev/null | tail -n 1 | tr -d '"')
    after=$(cpu_ticks "$5")
    awk -F, -v who="$1" -v p="$3" -v n="$4" -v b="$before" -v a="$after" -v hz="$(getconf CLK_TCK)" \
      '{ printf "%s|%s|%s|%s|%.3f\n", who, p, $1, $2, (a - b) * 1e6 / hz / n }' <<<"$line" >>"$RESULTS"
  done
}

echo "sluice serve ${EXTRA[*]}; machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GB; rounds=$ROUNDS n=$N n_pipelined=$NP clients=$CLIENTS" >&2
for round in $(seq "$ROUNDS"); do
  for p in 1 16; do
    n=$N; [[ $p -gt 1 ]] && n=$NP
    if (( round % 2 )); then run sluice "$SP" "$p" "$n" "$SLUICE_PID"; run redis "$RP" "$p" "$n" "$REDIS_PID"
    else run redis "$RP" "$p" "$n" "$REDIS_PID"; run sluice "$SP" "$p" "$n" "$SLUICE_PID"; fi
  done
  echo "round $round done" >&2
done

python3 - "$RESULTS" <<'EOF'
import statistics, sys
from collections import defaultdict
runs = defaultdict(list)
cpu = defaultdict(list)
order = []
for line in open(sys.argv[1]):
    who, p, test, rps, us = line.strip().split("|")
    test = test.split(" (")[0]
    if (test, p) not in order:
        order.append((test, p))
    runs[(who, p, test)].append(float(rps))
    cpu[(who, p, test)].append(float(us))
med = lambda xs: statistics.median(xs) if xs else 0.0
print(f"{'test':<14} {'pipe':>4} {'sluice rps':>11} {'redis rps':>11} {'ratio':>6}   {'sluice cpu':>10} {'redis cpu':>10}  (us of server CPU per request)")
ratios = []
for test, p in order:
    s = med(runs[("sluice", p, test)])
    r = med(runs[("redis", p, test)])
    ratio = s / r if r else 0
    ratios.append(ratio)
    sc, rc = med(cpu[("sluice", p, test)]), med(cpu[("redis", p, test)])
    print(f"{test:<14} {p:>4} {s:>11.0f} {r:>11.0f} {ratio:>6.2f}   {sc:>10.2f} {rc:>10.2f}")
print(f"geometric mean of ratios: {statistics.geometric_mean([x for x in ratios if x > 0]):.2f}")
EOF
rm -f "$RESULTS"
