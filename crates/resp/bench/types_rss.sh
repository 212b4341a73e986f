#!/usr/bin/env bash
# Memory of streams and HyperLogLogs in Sluice and redis-server, side by side: loads ENTRIES
# stream entries (XADD bench:stream * field <10 bytes>) and ENTRIES PFADDs (spread over
# HLL_KEYS keys, so most HLLs stay sparse, plus ENTRIES adds into one dense HLL) into fresh
# servers and prints the growth of each server's RSS (VmRSS) and the ratio.
#
#   crates/resp/bench/types_rss.sh            # ENTRIES=1000000 HLL_KEYS=100000
set -euo pipefail

ENTRIES=${ENTRIES:-1000000}
HLL_KEYS=${HLL_KEYS:-100000}
# shellcheck source=common.sh
source "$(dirname "$0")/common.sh" redis-server redis-cli
WORK=$(mktemp -d)
trap 'kill $SLUICE_PID $REDIS_PID 2>/dev/null; wait 2>/dev/null; rm -rf "$WORK"' EXIT

python3 - "$ENTRIES" "$HLL_KEYS" "$WORK" <<'PY'
import sys
n, keys, work = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
def cmd(*args):
    out = b"*%d\r\n" % len(args)
    for a in args:
        out += b"$%d\r\n%s\r\n" % (len(a), a)
    return out
with open(f"{work}/stream.resp", "wb") as f:
    for i in range(n):
        f.write(cmd(b"XADD", b"bench:stream", b"*", b"field", b"%010d" % i))
with open(f"{work}/hll_sparse.resp", "wb") as f:
    for i in range(n):
        f.write(cmd(b"PFADD", b"hll:%d" % (i % keys), b"element:%d" % i))
with open(f"{work}/hll_dense.resp", "wb") as f:
    for i in range(n):
        f.write(cmd(b"PFADD", b"bench:hll", b"element:%d" % i))
PY

rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }
# load name port pid file -> prints the RSS growth in KiB
load() {
  local before after
  before=$(rss_kib "$3")
  redis-cli -p "$2" --pipe <"$4" >/dev/null
  after=$(rss_kib "$3")
  echo $((after - before))
}

printf '| data | sluice RSS growth (MiB) | redis-server RSS growth (MiB) | ratio |\n|---|---|---|---|\n'
for data in stream hll_sparse hll_dense; do
  SLUICE_LOG=warn "$SLUICE_BIN" serve --resp "127.0.0.1:$SP" &
  SLUICE_PID=$!
  start_redis "$RP"
  REDIS_PID=$!
  wait_until_serving "$SP" "$RP"
  s=$(load sluice "$SP" "$SLUICE_PID" "$WORK/$data.resp")
  r=$(load redis "$RP" "$REDIS_PID" "$WORK/$data.resp")
  check_s=$(redis-cli -p "$SP" dbsize); check_r=$(redis-cli -p "$RP" dbsize)
  printf '| %s (%s keys each) | %.1f | %.1f | %.2f |\n' "$data" "$check_s/$check_r" \
    "$(bc -l <<<"$s/1024")" "$(bc -l <<<"$r/1024")" "$(bc -l <<<"$s/($r+0.0001)")"
  kill $SLUICE_PID $REDIS_PID; wait $SLUICE_PID $REDIS_PID 2>/dev/null || true
done
echo "bar: at most 1.2 (RSS growth after $ENTRIES stream entries / PFADDs)"
