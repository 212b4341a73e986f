#!/usr/bin/env bash
# Redis's own Tcl test units in external mode against a redis-server and a Sluice, both started
# here on free ports, in one run; prints the passed / failed counts per unit for each, and keeps
# every unit's full log (the failing tests and why) under $LOGS.
#
#   crates/resp/bench/tcl-suite.sh /path/to/redis [unit ...]
#
# /path/to/redis holds `runtest` and `tests/` of the redis/redis repository at tag 7.0.15 (the
# version Sluice reports), e.g.
#   git --git-dir=redis.git archive 7.0.15 tests runtest | tar -x -C /tmp/redis
# Units default to the scripting ones: unit/scripting unit/functions.
# SKIPTESTS=regexp skips the matching tests on both servers (runtest's --skiptest /regexp), e.g.
# the tests that need a feature of another unit (maxmemory, ACL, replicas).
set -euo pipefail

REDIS_DIR=$(cd "${1:?usage: tcl-suite.sh REDIS_DIR [unit ...]}" && pwd)
shift
[[ -x "$REDIS_DIR/runtest" ]] || REDIS_DIR=$(dirname "$REDIS_DIR")
[[ -x "$REDIS_DIR/runtest" ]] || { echo "no runtest in $REDIS_DIR" >&2; exit 1; }
UNITS=("$@")
[[ ${#UNITS[@]} -gt 0 ]] || UNITS=(unit/scripting unit/functions)
LOGS=${LOGS:-$(mktemp -d /tmp/tcl-suite.XXXXXX)}
mkdir -p "$LOGS"
# shellcheck source=common.sh
source "$(dirname "$0")/common.sh" redis-server redis-cli tclsh

# runtest wants the binaries of a build tree next to it, even in external mode.
mkdir -p "$REDIS_DIR/src"
for tool in redis-server redis-cli redis-benchmark redis-check-aof; do
  if [[ ! -e "$REDIS_DIR/src/$tool" ]] && command -v "$tool" >/dev/null; then
    ln -s "$(command -v "$tool")" "$REDIS_DIR/src/$tool"
  fi
done

SLUICE_LOG=warn "$SLUICE_BIN" serve --resp "127.0.0.1:$SP" &
SLUICE_PID=$!
start_redis "$RP"
REDIS_PID=$!
trap 'kill $SLUICE_PID $REDIS_PID 2>/dev/null; wait 2>/dev/null' EXIT
wait_until_serving "$SP" "$RP"

# Runs UNIT against PORT; prints "passed failed" and keeps the log as $LOGS/NAME-UNIT.log.
run_unit() {
  local name=$1 port=$2 unit=$3 log skip=()
  log="$LOGS/$name-${unit//\//_}.log"
  [[ -n "${SKIPTESTS:-}" ]] && skip=(--skiptest "/$SKIPTESTS")
  (cd "$REDIS_DIR" && timeout 900 ./runtest --host 127.0.0.1 --port "$port" --singledb \
    --ignore-encoding --ignore-digest --tags -needs:debug --tags -needs:repl --tags -needs:save \
    --single "$unit" "${skip[@]}" --clients 1 --timeout 120) 2>&1 |
    sed 's/\x1b\[[0-9;]*m//g' >"$log" || true
  echo "$(grep -c '^\[ok\]' "$log" || true) $(grep -cE '^\[(err|exception)\]' "$log" || true)"
}

printf '%-22s %14s %14s\n' unit "redis ok/fail" "sluice ok/fail"
total_r=0; total_s=0
for unit in "${UNITS[@]}"; do
  read -r rok rfail < <(run_unit redis "$RP" "$unit")
  read -r sok sfail < <(run_unit sluice "$SP" "$unit")
  printf '%-22s %14s %14s\n' "$unit" "$rok/$rfail" "$sok/$sfail"
  total_r=$((total_r + rok)); total_s=$((total_s + sok))
done
printf '%-22s %14s %14s\n' total "$total_r" "$total_s"
echo "logs: $LOGS"
