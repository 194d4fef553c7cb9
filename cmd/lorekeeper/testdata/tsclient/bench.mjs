// bench.mjs times MCP tool calls through the official TypeScript SDK client
// over streamable HTTP, as an assistant makes them: one connection per
// server, tools listed first (the client then checks structured output
// against each tool's output schema), calls one at a time. Calls to the
// servers are interleaved round by round, so a slow moment of the machine
// falls on all of them alike.
//
// BenchmarkMCPHTTP (cmd/lorekeeper/bench_test.go) runs it as
// node bench.mjs '<config>', config being JSON:
//   {"rounds": 300, "warmup": 20,
//    "servers": {"floor": "http://...", "lorekeeper": "http://..."},
//    "calls": [{"name": "spell-name", "server": "lorekeeper", "tool": "lookup_spell", "args": {...}}, ...]}
// It prints one JSON line: {"spell-name": {"p50": ms, "p99": ms, "bytes": n}, ...}.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const cfg = JSON.parse(process.argv[2]);

const clients = {};
for (const [name, url] of Object.entries(cfg.servers)) {
  const client = new Client({ name: "lorekeeper-bench", version: "1" });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  await client.listTools();
  clients[name] = client;
}

async function call(c) {
  const res = await clients[c.server].callTool({ name: c.tool, arguments: c.args });
  if (res.isError) {
    throw new Error(`${c.name}: ${JSON.stringify(res.content)}`);
  }
  return res;
}

const times = Object.fromEntries(cfg.calls.map((c) => [c.name, []]));
const bytes = {};
for (const c of cfg.calls) {
  bytes[c.name] = JSON.stringify(await call(c)).length;
}
for (let round = 0; round < cfg.warmup + cfg.rounds; round++) {
  for (const c of cfg.calls) {
    const start = performance.now();
    await call(c);
    if (round >= cfg.warmup) {
      times[c.name].push(performance.now() - start);
    }
  }
}

const quantile = (sorted, q) => sorted[Math.floor((sorted.length - 1) * q)];
const out = {};
for (const [name, t] of Object.entries(times)) {
  t.sort((a, b) => a - b);
  out[name] = { p50: quantile(t, 0.5), p99: quantile(t, 0.99), bytes: bytes[name] };
}
console.log(JSON.stringify(out));
for (const client of Object.values(clients)) {
  await client.close();
}
