// Tool calls per second through `forgec serve` with the official MCP TypeScript SDK (streamable HTTP or stdio).
//   NODE_PATH=<dir with node_modules/@modelcontextprotocol/sdk> node bench/mcp_ts_client.mjs URL CALLS.json
//   node bench/mcp_ts_client.mjs --stdio BUILD ENV CALLS.json
// CALLS.json: [[tool, arguments], ...]. Prints one JSON line: {"calls": n, "calls_per_s": x}.
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import path from "node:path";

const require = createRequire(path.join(process.env.MCP_SDK_ROOT || process.cwd(), "noop.js"));
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StreamableHTTPClientTransport } = require("@modelcontextprotocol/sdk/client/streamableHttp.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");

const args = process.argv.slice(2);
let transport, callsFile;
if (args[0] === "--stdio") {
  transport = new StdioClientTransport({ command: process.env.FORGEC_PYTHON || "python3", args: ["-m", "forgec", "serve", args[1], "--env", args[2]],
                                         env: { ...process.env }, stderr: "ignore" });
  callsFile = args[3];
} else {
  transport = new StreamableHTTPClientTransport(new URL(args[0]));
  callsFile = args[1];
}
const calls = JSON.parse(readFileSync(callsFile, "utf8"));
const client = new Client({ name: "forgec-bench-ts", version: "1.0.0" });
await client.connect(transport);
await client.callTool({ name: calls[0][0], arguments: calls[0][1] }); // warm
const t0 = performance.now();
for (const [name, a] of calls) {
  await client.callTool({ name, arguments: a });
}
const s = (performance.now() - t0) / 1000;
console.log(JSON.stringify({ calls: calls.length, calls_per_s: calls.length / s }));
await client.close();
