#!/usr/bin/env bash
# Installs the real clients the test suites drive: the Python packages of requirements.txt into
# target/clients/venv and the npm packages of package.json into target/clients/node. Installs
# python3 (with venv), Node.js, redis-server, HAProxy and curl from Debian's packages first when they
# are missing and this runs as root. Does nothing when the manifests have not changed since the
# last install.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
dest="${SLUICE_CLIENTS_DIR:-${CARGO_TARGET_DIR:-$root/target}/clients}"
mkdir -p "$dest"

need_apt=()
command -v python3 >/dev/null || need_apt+=(python3 python3-venv)
if command -v python3 >/dev/null && ! python3 -c 'import venv, ensurepip' 2>/dev/null; then
  need_apt+=(python3-venv)
fi
command -v node >/dev/null || need_apt+=(nodejs)
command -v npm >/dev/null || need_apt+=(npm)
# The Redis tests compare with a private redis-server (DUMP/RESTORE both ways, differential).
command -v redis-server >/dev/null || need_apt+=(redis-server)
# The stateless-gateway script puts a real load balancer in front of two `sluice serve` and
# drives it with curl.
command -v haproxy >/dev/null || need_apt+=(haproxy)
command -v curl >/dev/null || need_apt+=(curl)
if ((${#need_apt[@]})); then
  if [[ $(id -u) -ne 0 ]]; then
    echo "install.sh: missing ${need_apt[*]}: sudo apt-get install ${need_apt[*]}" >&2
    exit 1
  fi
  echo "install.sh: installing ${need_apt[*]} from Debian's packages" >&2
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

stamp_of() { sha256sum "$@" | sha256sum | cut -d' ' -f1; }

py_stamp=$(stamp_of "$here/requirements.txt")
if [[ ! -x "$dest/venv/bin/python" || "$(cat "$dest/venv/.stamp" 2>/dev/null)" != "$py_stamp" ]]; then
  echo "install.sh: Python clients into $dest/venv" >&2
  python3 -m venv --clear "$dest/venv"
  "$dest/venv/bin/python" -m pip install --quiet --disable-pip-version-check \
    -r "$here/requirements.txt"
  echo "$py_stamp" >"$dest/venv/.stamp"
fi

js_stamp=$(stamp_of "$here/package.json" "$here/package-lock.json")
if [[ ! -d "$dest/node/node_modules" || "$(cat "$dest/node/.stamp" 2>/dev/null)" != "$js_stamp" ]]; then
  echo "install.sh: JavaScript clients into $dest/node" >&2
  rm -rf "$dest/node"
  mkdir -p "$dest/node"
  cp "$here/package.json" "$here/package-lock.json" "$dest/node/"
  (cd "$dest/node" && npm ci --silent --no-audit --no-fund)
  echo "$js_stamp" >"$dest/node/.stamp"
fi
