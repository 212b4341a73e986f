# Shared by compare.sh and rss.sh (sourced): skips when a tool is missing, builds the release
# `sluice` binary, and sets ROOT, SLUICE_BIN and two free ports SP (Sluice) and RP (Redis).
# Usage: source common.sh tool...

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
for tool in "$@" python3; do
  command -v "$tool" >/dev/null || { echo "SKIP: $tool is not installed" >&2; exit 0; }
done

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

cargo build --release -q -p sluice --manifest-path "$ROOT/Cargo.toml"
SLUICE_BIN="${CARGO_TARGET_DIR:-$ROOT/target}/release/sluice"
SP=$(free_port); RP=$(free_port)
