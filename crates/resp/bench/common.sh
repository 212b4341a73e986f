# Shared by compare.sh, variants.sh and rss.sh (sourced): skips when a tool is missing, builds the
# release `sluice` binary, sets ROOT, SLUICE_BIN and two free ports SP (Sluice) and RP (Redis), and
# defines the helpers below.
# Usage: source common.sh tool...

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
for tool in "$@" python3; do
  command -v "$tool" >/dev/null || { echo "SKIP: $tool is not installed" >&2; exit 0; }
done

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# Starts a redis-server for benchmarking on PORT in the background (its pid is then in $!).
start_redis() {
  redis-server --port "$1" --bind 127.0.0.1 --save '' --appendonly no --loglevel warning >/dev/null &
}

# Waits (up to 5 s) until each PORT answers PING.
wait_until_serving() {
  local port
  for port in "$@"; do
    for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.05; done
  done
}

# A process's CPU time so far (user + system, clock ticks).
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

# SLUICE_NO_BUILD=1 runs the release binary as it is (it must exist).
[[ -n "${SLUICE_NO_BUILD:-}" ]] || cargo build --release -q -p sluice --manifest-path "$ROOT/Cargo.toml"
SLUICE_BIN="${CARGO_TARGET_DIR:-$ROOT/target}/release/sluice"
SP=$(free_port); RP=$(free_port)
