#!/usr/bin/env bash
# The official MCP conformance suite against `waymark serve --http`, with the committed
# baseline (.ci/conformance-baseline.yml: only scenarios and checks that need the suite's own
# fixture tools): the active scenarios, then each scenario of the 2026-07-28 tasks extension
# (extension scenarios are not in a default run, so they are named one by one). The suite needs Node >= 22; this machine may have Node 20, so Node 22 comes from the
# npm registry (the `node` package ships the binary), installed with the suite in a temp dir.
set -euo pipefail
cd "$(dirname "$0")/.."

DENO_VERSION="${DENO_VERSION:-$(tr -d '[:space:]' < .dvmrc)}"
CONFORMANCE_VERSION="0.2.0-alpha.12"
NODE_VERSION="22"
export DENO_NO_UPDATE_CHECK=1 NO_COLOR=1

work="$(mktemp -d)"
server_pid=""
cleanup() {
  if [[ -n "$server_pid" ]]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

echo "== conformance: installing @modelcontextprotocol/conformance@${CONFORMANCE_VERSION} and node@${NODE_VERSION}"
npm install --prefix "$work/tools" --no-save --no-audit --no-fund --loglevel=error \
  "@modelcontextprotocol/conformance@${CONFORMANCE_VERSION}" "node@${NODE_VERSION}" >/dev/null
node22="$work/tools/node_modules/.bin/node"
suite="$work/tools/node_modules/@modelcontextprotocol/conformance/dist/index.js"
if ! "$node22" --version | grep -q "^v${NODE_VERSION}\."; then
  echo "conformance: node@${NODE_VERSION} from npm did not install a Node ${NODE_VERSION} binary" >&2
  exit 1
fi
echo "== conformance: node $("$node22" --version)"

# run the deno binary itself (not through npx), so the pid we stop is the server's
deno_bin="$(command -v deno || true)"
if [[ -z "$deno_bin" ]] || ! "$deno_bin" --version | grep -q "^deno ${DENO_VERSION}"; then
  deno_bin="$(npx --yes "deno@${DENO_VERSION}" eval --quiet 'console.log(Deno.execPath())')"
fi
"$deno_bin" run -A --quiet main.ts serve --http 0 --home "$work/home" \
  </dev/null >"$work/server.out" 2>"$work/server.log" &
server_pid=$!
port=""
for _ in $(seq 1 300); do
  port="$(sed -n 's#.*http://127\.0\.0\.1:\([0-9]*\)/mcp.*#\1#p' "$work/server.log" | head -n 1)"
  [[ -n "$port" ]] && break
  if ! kill -0 "$server_pid" 2>/dev/null; then cat "$work/server.log" >&2; exit 1; fi
  sleep 0.1
done
if [[ -z "$port" ]]; then echo "conformance: the server did not start" >&2; cat "$work/server.log" >&2; exit 1; fi
echo "== conformance: waymark serve --http on port $port"

TASK_SCENARIOS=(
  tasks-lifecycle tasks-capability-negotiation tasks-wire-fields tasks-request-state-removal
  tasks-mrtr-input tasks-request-headers tasks-dispatch-and-envelope tasks-status-notifications
  tasks-required-task-error tasks-mrtr-composition
)
status=0
"$node22" "$suite" server --url "http://127.0.0.1:${port}/mcp" \
  --expected-failures .ci/conformance-baseline.yml -o "$work/results" || status=1
for scenario in "${TASK_SCENARIOS[@]}"; do
  "$node22" "$suite" server --url "http://127.0.0.1:${port}/mcp" --scenario "$scenario" \
    --expected-failures .ci/conformance-baseline.yml -o "$work/results-$scenario" || status=1
done
exit "$status"
