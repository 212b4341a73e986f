#!/usr/bin/env bash
# Memory after loading KEYS keys with 10-byte values into Sluice's Redis gate and into
# redis-server, side by side: prints each server's RSS (VmRSS) before and after, and the ratio.
#
#   crates/resp/bench/rss.sh               # KEYS=1000000
set -euo pipefail

KEYS=${KEYS:-1000000}
# shellcheck source=common.sh
source "$(dirname "$0")/common.sh" redis-server redis-cli
SLUICE_LOG=warn "$SLUICE_BIN" serve --resp "127.0.0.1:$SP" &
SLUICE_PID=$!
start_redis "$RP"
REDIS_PID=$!
COMMANDS=$(mktemp)
trap 'kill $SLUICE_PID $REDIS_PID 2>/dev/null; wait 2>/dev/null; rm -f "$COMMANDS"' EXIT
for port in "$SP" "$RP"; do
  for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.05; done
done

# SET key:<n> <10 bytes>, in RESP, as redis-cli --pipe expects.
python3 - "$KEYS" >"$COMMANDS" <<'PY'
import sys
out = sys.stdout.buffer
for n in range(int(sys.argv[1])):
    key = b"key:%d" % n
    out.write(b"*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$10\r\n%010d\r\n" % (len(key), key, n))
PY

rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }
report() { # name port pid
  local before after keys
  before=$(rss_kib "$3")
  redis-cli -p "$2" --pipe <"$COMMANDS" >/dev/null
  keys=$(redis-cli -p "$2" dbsize)
  after=$(rss_kib "$3")
  echo "$1 $keys $before $after"
}
S=$(report sluice "$SP" "$SLUICE_PID")
R=$(report redis-server "$RP" "$REDIS_PID")
printf '| server | keys | RSS before (MiB) | RSS after (MiB) |\n|---|---|---|---|\n'
for line in "$S" "$R"; do
  read -r name keys before after <<<"$line"
  printf '| %s | %s | %.1f | %.1f |\n' "$name" "$keys" "$(bc -l <<<"$before/1024")" "$(bc -l <<<"$after/1024")"
done
read -r _ _ _ s_after <<<"$S"; read -r _ _ _ r_after <<<"$R"
printf 'RSS ratio sluice/redis-server after %s keys: %.2f (bar: at most 1.2)\n' "$KEYS" "$(bc -l <<<"$s_after/$r_after")"
