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
# npm: on PATH, or the copy a Node.js package carries without linking it; when neither runs
# (NodeSource's repacked nodejs ships a partial copy and conflicts with Debian's npm package),
# npm itself from the npm registry, checked against its published SHA-512, under $dest/npm.
NPM_VERSION=10.9.2
NPM_SHA512=8ab88f10f224a0c614cb717a7f7c30499014f77134120e9c1f0211ea3cf3397592cbe483feb38e0c4b3be1c54e347292c76a1b5edb94a3289d5448484ab8ac81
npm_cmd=()
npm_runs() { "$@" --version >/dev/null 2>&1; }
if npm_runs npm; then
  npm_cmd=(npm)
elif command -v node >/dev/null; then
  node_prefix=$(dirname "$(dirname "$(readlink -f "$(command -v node)")")")
  for cli in "$node_prefix/lib/node_modules/npm/bin/npm-cli.js" "$dest/npm/bin/npm-cli.js"; do
    if [[ -f $cli ]] && npm_runs node "$cli"; then
      npm_cmd=(node "$cli")
      break
    fi
  done
fi
fetch_npm() {
  echo "install.sh: npm $NPM_VERSION from the npm registry into $dest/npm" >&2
  local tarball="$dest/npm-$NPM_VERSION.tgz"
  curl -fsSL "https://registry.npmjs.org/npm/-/npm-$NPM_VERSION.tgz" -o "$tarball"
  if [[ $(sha512sum "$tarball" | cut -d' ' -f1) != "$NPM_SHA512" ]]; then
    echo "install.sh: npm-$NPM_VERSION.tgz does not match its published SHA-512" >&2
    exit 1
  fi
  rm -rf "$dest/npm"
  mkdir -p "$dest/npm"
  tar -xzf "$tarball" -C "$dest/npm" --strip-components=1
  rm -f "$tarball"
  npm_cmd=(node "$dest/npm/bin/npm-cli.js")
}
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
if ((${#npm_cmd[@]} == 0)); then
  if npm_runs npm; then npm_cmd=(npm); else fetch_npm; fi
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
  (cd "$dest/node" && "${npm_cmd[@]}" ci --silent --no-audit --no-fund)
  echo "$js_stamp" >"$dest/node/.stamp"
fi
