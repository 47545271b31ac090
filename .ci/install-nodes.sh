#!/usr/bin/env bash
# Installs the Ethereum nodes the `gigagas dump` tests run against, when missing:
#   anvil  1.7.1 from the npm package @foundry-rs/anvil-linux-amd64, into a cache dir outside the repo
#   geth   v1.16.7 with `go install` (about 2.5 minutes of compiling the first time)
# Prints where they are as `export GIGAGAS_ANVIL=...` / `export GIGAGAS_GETH=...` lines, so a
# caller can `eval "$(bash .ci/install-nodes.sh)"`; progress goes to stderr.
#
# Environment: GIGAGAS_NODES_DIR (default ~/.cache/gigagas-nodes) for anvil's npm install.
set -euo pipefail

GETH_VERSION="v1.16.7"
ANVIL_PACKAGE="@foundry-rs/anvil-linux-amd64"
ANVIL_VERSION="1.7.1"
nodes_dir="${GIGAGAS_NODES_DIR:-$HOME/.cache/gigagas-nodes}"
anvil="$nodes_dir/node_modules/$ANVIL_PACKAGE/bin/anvil"

log() { echo "install-nodes: $*" >&2; }

# ---- anvil
if [ -n "${GIGAGAS_ANVIL:-}" ] && [ -x "$GIGAGAS_ANVIL" ]; then
  anvil="$GIGAGAS_ANVIL"
elif ! { [ -x "$anvil" ] && printf '%s\n' "$("$anvil" --version 2>/dev/null || true)" | grep -q "Version: $ANVIL_VERSION"; }; then
  if ! command -v npm >/dev/null 2>&1; then
    log "npm not found: installing nodejs and npm with apt-get"
    apt-get update -qq && apt-get install -y -qq nodejs npm >&2
  fi
  log "installing $ANVIL_PACKAGE@$ANVIL_VERSION into $nodes_dir"
  mkdir -p "$nodes_dir"
  (cd "$nodes_dir" && npm install --no-audit --no-fund --silent "$ANVIL_PACKAGE@$ANVIL_VERSION" >&2)
  chmod +x "$anvil" 2>/dev/null || true
  [ -x "$anvil" ] || { log "anvil is not at $anvil after npm install"; exit 1; }
fi
log "anvil: $anvil ($("$anvil" --version 2>/dev/null | sed -n 1p))"

# ---- geth
if [ -n "${GIGAGAS_GETH:-}" ] && [ -x "$GIGAGAS_GETH" ]; then
  geth="$GIGAGAS_GETH"
else
  if ! command -v go >/dev/null 2>&1; then
    if [ -x /usr/local/go/bin/go ]; then
      export PATH="/usr/local/go/bin:$PATH"
    else
      log "go not found: installing golang with apt-get"
      apt-get update -qq && apt-get install -y -qq golang >&2
    fi
  fi
  geth="$(go env GOPATH)/bin/geth"
  have=""
  if [ -x "$geth" ]; then have="$("$geth" version 2>/dev/null || true)"; fi
  if ! printf '%s\n' "$have" | grep -q "^Version: ${GETH_VERSION#v}"; then
    log "building geth $GETH_VERSION with go install (a few minutes)"
    go install "github.com/ethereum/go-ethereum/cmd/geth@$GETH_VERSION" >&2
  fi
  [ -x "$geth" ] || { log "geth is not at $geth after go install"; exit 1; }
fi
log "geth: $geth ($("$geth" version 2>/dev/null | sed -n 's/^Version: //p'))"

echo "export GIGAGAS_ANVIL=$anvil"
echo "export GIGAGAS_GETH=$geth"
