#!/usr/bin/env bash
# Several Sluice configurations against one redis-server, paired: for each round and test every
# server runs in turn (the order rotating per round), and the summary gives each variant's median
# requests/s, its ratio to Redis's median and its server CPU per request.
#
#   VARIANTS="--resp-busy-poll-us=0 --resp-busy-poll-us=20" crates/resp/bench/variants.sh
#   P=16 N=400000 ROUNDS=2 VARIANTS="--resp-busy-poll-us=0 --resp-busy-poll-us=20" crates/resp/bench/variants.sh
#
# VARIANTS is a space-separated list; each entry is one variant's `sluice serve` flags, with
# commas standing for spaces ("--threads=1,--resp-io-threads=0"). An entry may start with
# `bin=PATH,` to run another build of sluice (before/after comparisons of a change); the entry
# `redis-server` runs a second Redis, paired against the first: the benchmark's noise floor.
set -euo pipefail

ROUNDS=${ROUNDS:-3}
N=${N:-100000}
P=${P:-1}
CLIENTS=${CLIENTS:-50}
TESTS=${TESTS:-set,get,incr,lpush,rpush,lpop,rpop,sadd,hset,spop,zadd,lrange_100,mset}
VARIANTS=${VARIANTS:---resp-busy-poll-us=0 --resp-busy-poll-us=20}
# shellcheck source=common.sh
source "$(dirname "$0")/common.sh" redis-server redis-benchmark redis-cli

declare -A PORT PID
NAMES=(redis)
PORT[redis]=$RP
start_redis "$RP"
PID[redis]=$!
trap 'kill "${PID[@]}" 2>/dev/null; wait 2>/dev/null' EXIT
for variant in $VARIANTS; do
  read -r -a flags <<<"${variant//,/ }"
  bin=$SLUICE_BIN
  if [[ ${flags[0]:-} == bin=* ]]; then
    bin=${flags[0]#bin=}
    flags=("${flags[@]:1}")
  fi
  port=$(free_port)
  if [[ $variant == redis-server ]]; then
    start_redis "$port"
  else
    SLUICE_LOG=warn "$bin" serve --resp "127.0.0.1:$port" "${flags[@]}" >/dev/null &
  fi
  NAMES+=("$variant"); PORT[$variant]=$port; PID[$variant]=$!
done
for name in "${NAMES[@]}"; do wait_until_serving "${PORT[$name]}"; done

RESULTS=$(mktemp)
echo "machine: $(nproc) cores; rounds=$ROUNDS n=$N pipeline=$P clients=$CLIENTS" >&2
for round in $(seq "$ROUNDS"); do
  for t in ${TESTS//,/ }; do
    count=${#NAMES[@]}
    for i in $(seq 0 $((count - 1))); do
      name=${NAMES[$(( (i + round) % count ))]}
      before=$(cpu_ticks "${PID[$name]}")
      rps=$(redis-benchmark -p "${PORT[$name]}" -q -n "$N" -c "$CLIENTS" -P "$P" -t "$t" --csv 2>/dev/null \
        | tail -n 1 | tr -d '"' | cut -d, -f2)
      after=$(cpu_ticks "${PID[$name]}")
      echo "$name|$t|$rps|$(( after - before ))" >>"$RESULTS"
    done
  done
  echo "round $round done" >&2
done

python3 - "$RESULTS" "$N" "$(getconf CLK_TCK)" <<'PY'
import collections, math, statistics, sys
path, n, hz = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rps, cpu = collections.defaultdict(list), collections.defaultdict(list)
for line in open(path):
    name, test, r, ticks = line.rstrip("\n").split("|")
    rps[(name, test)].append(float(r))
    cpu[(name, test)].append(int(ticks) * 1e6 / hz / n)
tests = list(dict.fromkeys(t for _, t in rps))
names = ["redis"] + [nm for nm in dict.fromkeys(nm for nm, _ in rps) if nm != "redis"]
print("test         " + "".join(f"{nm:>40}" for nm in names))
logs, under = collections.Counter(), collections.Counter()
for t in tests:
    base = statistics.median(rps[("redis", t)])
    cells = []
    for nm in names:
        m = statistics.median(rps[(nm, t)])
        ratio = m / base
        logs[nm] += math.log(ratio)
        under[nm] += ratio < 1
        cells.append(f"{m:>12.0f} {ratio:5.2f} {statistics.median(cpu[(nm, t)]):6.2f} us")
    print(f"{t:<13}" + "".join(f"{c:>40}" for c in cells))
for nm in names:
    print(f"{nm}: geometric mean {math.exp(logs[nm] / len(tests)):.3f}, tests under 1.0: {under[nm]}")
PY
