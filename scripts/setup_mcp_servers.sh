#!/usr/bin/env bash
# Install the real MCP filesystem and memory servers (npm) that the differential tests
# (tests/test_differential_*.py, bench/differential.py) run beside the envs forgec
# synthesizes from their docs. Pinned to the versions whose tools/list is in
# tests/corpus/core, so the docs and the implementation are the same release.
#
# Usage: bash scripts/setup_mcp_servers.sh [DIR]   (default: .mcp-servers in the repo root)
# Prints DIR on its last line; export FORGEC_MCP_SERVERS=<that dir> (the tests default to it).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="${1:-$ROOT/.mcp-servers}"
PKGS="@modelcontextprotocol/server-filesystem@2026.8.31 @modelcontextprotocol/server-memory@2026.8.31"
mkdir -p "$DIR"
if [ -f "$DIR/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js" ] && [ -f "$DIR/node_modules/@modelcontextprotocol/server-memory/dist/index.js" ]; then
  echo "MCP servers already installed in $DIR" >&2
else
  command -v npm >/dev/null 2>&1 || { echo "npm not found: install Node.js (>= 18) and npm first" >&2; exit 1; }
  [ -f "$DIR/package.json" ] || echo '{"name": "forgec-mcp-servers", "private": true}' > "$DIR/package.json"
  (cd "$DIR" && npm install --silent --no-audit --no-fund $PKGS >&2)
fi
echo "$DIR"
