#!/usr/bin/env bash
# Installs what a fresh machine lacks to build and test Code Memory:
#   1. Debian packages (Chromium for the host/e2e tiers, toolchain for code-server's native modules);
#   2. the project's npm dependencies (npm ci);
#   3. the cached VS Code host in .vscode-host/: Node 24 and code-server from npm (about 150 s once).
# Usage: bash scripts/setup.sh [--host-only] [--skip-apt] [--skip-npm-ci] [--force-npm-ci]
set -euo pipefail
cd "$(dirname "$0")/.."

CODE_SERVER_VERSION=4.139.1
NODE_HOST_VERSION=24.9.0
HOST_DIR="$PWD/.vscode-host"
APT_PACKAGES=(chromium libkrb5-dev build-essential python3 pkg-config xvfb git unzip)

skip_apt=0
skip_npm_ci=0
force_npm_ci=0
for arg in "$@"; do
  case "$arg" in
    --host-only) skip_apt=1; skip_npm_ci=1 ;;
    --skip-apt) skip_apt=1 ;;
    --skip-npm-ci) skip_npm_ci=1 ;;
    --force-npm-ci) force_npm_ci=1 ;;
    *) echo "setup: unknown option $arg" >&2; exit 2 ;;
  esac
done

step() { printf '\n== setup: %s\n' "$*"; }
now() { date +%s; }
t0=$(now)

# --- 1. Debian packages ------------------------------------------------------------------------
if [ "$skip_apt" = 0 ]; then
  step "Debian packages"
  missing=()
  for pkg in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "installing: ${missing[*]}"
    sudo_cmd=()
    [ "$(id -u)" = 0 ] || sudo_cmd=(sudo)
    "${sudo_cmd[@]}" apt-get update -q
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
  else
    echo "all present: ${APT_PACKAGES[*]}"
  fi
fi

# --- 2. project dependencies -------------------------------------------------------------------
# A warm machine skips the reinstall when node_modules was installed by `npm ci` from this very
# lockfile (stamp written below); --force-npm-ci reinstalls anyway.
lock_stamp=node_modules/.code-memory-npm-ci
lock_hash() { sha256sum package-lock.json package.json .npmrc | sha256sum | cut -d' ' -f1; }
if [ "$skip_npm_ci" = 0 ]; then
  step "npm ci"
  if [ "$force_npm_ci" = 0 ] && [ -f "$lock_stamp" ] && [ "$(cat "$lock_stamp")" = "$(lock_hash)" ]; then
    echo "node_modules already matches package-lock.json (--force-npm-ci to reinstall)"
  else
    npm ci --no-audit --no-fund
    lock_hash > "$lock_stamp"
  fi
fi

# --- 3. cached VS Code host (code-server + its Node 24) ----------------------------------------
case "$(uname -m)" in
  x86_64) arch=x64 ;;
  aarch64 | arm64) arch=arm64 ;;
  *) echo "setup: unsupported CPU $(uname -m) for the code-server host" >&2; exit 1 ;;
esac
node_pkg="node-linux-$arch"
node_rel="node/node_modules/$node_pkg/bin/node"
node_dir="$HOST_DIR/node/node_modules/$node_pkg"
entry_rel="code-server/node_modules/code-server/out/node/entry.js"
cs_dir="$HOST_DIR/code-server/node_modules/code-server"

# A cache is valid only if host.json (written last) names the wanted versions and both the host
# Node and code-server, including its native modules, start.
host_valid() {
  [ -f "$HOST_DIR/host.json" ] || return 1
  grep -q "\"codeServerVersion\": \"$CODE_SERVER_VERSION\"" "$HOST_DIR/host.json" || return 1
  grep -q "\"nodeVersion\": \"v$NODE_HOST_VERSION\"" "$HOST_DIR/host.json" || return 1
  [ "$("$HOST_DIR/$node_rel" --version 2>/dev/null)" = "v$NODE_HOST_VERSION" ] || return 1
  "$HOST_DIR/$node_rel" "$HOST_DIR/$entry_rel" --version 2>/dev/null | grep -q "^$CODE_SERVER_VERSION" || return 1
  (cd "$cs_dir/lib/vscode" && "$HOST_DIR/$node_rel" -e "require('node-pty'); require('@vscode/spdlog'); require('@parcel/watcher')") >/dev/null 2>&1 || return 1
}

step "VS Code host (code-server $CODE_SERVER_VERSION on Node $NODE_HOST_VERSION) in .vscode-host/"
if host_valid; then
  echo "cached and valid"
else
  if [ -e "$HOST_DIR/host.json" ] || [ -e "$HOST_DIR/node" ] || [ -e "$HOST_DIR/code-server" ]; then
    echo "cache incomplete or outdated: reinstalling"
  fi
  rm -rf "$HOST_DIR/host.json" "$HOST_DIR/node" "$HOST_DIR/code-server"
  mkdir -p "$HOST_DIR/node" "$HOST_DIR/code-server"

  # The `node` npm package only delegates to node-<os>-<arch> from a preinstall script (blocked by
  # npm's install-script policy); the platform package itself carries the binary and headers.
  echo '{ "private": true, "description": "Node for the code-server test host" }' > "$HOST_DIR/node/package.json"
  npm install --prefix "$HOST_DIR/node" --no-audit --no-fund --no-save "$node_pkg@$NODE_HOST_VERSION"

  # code-server's postinstall runs nested npm installs that compile native modules against the
  # host Node: that Node first on PATH and its headers as nodedir (a user-level nodedir would
  # point node-gyp at the wrong headers). Its scripts are needed, so allow them for this install.
  echo '{ "private": true, "description": "code-server as a cached VS Code test host" }' > "$HOST_DIR/code-server/package.json"
  PATH="$node_dir/bin:$PATH" \
    npm_config_nodedir="$node_dir" \
    npm_config_dangerously_allow_all_scripts=true \
    npm install --prefix "$HOST_DIR/code-server" --no-audit --no-fund --no-save "code-server@$CODE_SERVER_VERSION"

  cat > "$HOST_DIR/host.json" <<JSON
{
  "codeServerVersion": "$CODE_SERVER_VERSION",
  "nodeVersion": "v$NODE_HOST_VERSION",
  "node": "$node_rel",
  "codeServerEntry": "$entry_rel"
}
JSON
  if ! host_valid; then
    rm -f "$HOST_DIR/host.json"
    echo "setup: the code-server host was installed but does not start; see the npm output above" >&2
    exit 1
  fi
  echo "installed and valid"
fi

step "done in $(( $(now) - t0 )) s"
