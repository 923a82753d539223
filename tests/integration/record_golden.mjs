// Records the golden sessions in tests/sessions/ from real clients driving `kiln mcp --record`:
//
//   sdk_stdio_cpu_tools   the TypeScript SDK client over stdio through the CPU tools (get_task,
//                         search_zoo, read_zoo_entry, read_ptx_spec, compile, simulate on one
//                         small workload, synccheck with the static engine, a resource, a
//                         prompt) and their error cases, and one benchmark (no runner: replayed
//                         as "not replayed (no GPU)")
//   sdk_http_session      the SDK client over Streamable HTTP (a 2025 session, Mcp-Session-Id)
//   inspector_cli_http    the MCP Inspector CLI (v1), two invocations: two HTTP sessions
//   claude_mcp_list       Claude Code's `claude mcp list` handshake (the 2026-07-28 path,
//                         server/discover), offline
//
// Re-record them all (after a change that alters an answer on purpose) with one command:
//
//   KILN_BIN=build/bin/kiln node tests/integration/record_golden.mjs [NAME...]
//
// then review `git diff tests/sessions/`. Paths that depend on the machine are replaced in the
// recording: the checkout by /KILN_SOURCE_DIR, the session's temporary folder (its
// KILN_CACHE_DIR is WORK/cache) by /KILN_GOLDEN_TMP, HOME by /KILN_HOME. The sessions send
// sources inline. The ctests (tests/replay/CMakeLists.txt, label replay) replay each one with
// `kiln replay --map` putting this checkout and a cache folder of the build back in.

import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

import { HERE, kilnBin, killPid, startHttpServer } from "./harness.mjs";

const REPO = path.resolve(HERE, "..", "..");
const OUT = path.join(REPO, "tests", "sessions");
const TASKS = path.join(REPO, "tasks");
const STARTER = readFileSync(path.join(TASKS, "fp16_gemm", "starter.cu"), "utf8");
const CALL_MS = 240_000;

const NOT_CPP = "this is not C++ at all\n";
// __syncthreads under a thread-dependent branch: the static engine finds it.
const DIVERGENT_BARRIER = `#include "kiln/abi.h"
__global__ void k(float* x) {
  if (threadIdx.x < 16) __syncthreads();
  x[threadIdx.x] = 0.0f;
}
extern "C" int kiln_launch(const kiln_tensor* t, int, const kiln_scalar*, int, cudaStream_t s) {
  k<<<1, 32, 0, s>>>(static_cast<float*>(t[2].data));
  return 0;
}
`;

const CLIENT = { name: "kiln-golden", version: "1.0.0" };
const kilnArgs = (record) => ["--tasks-dir", TASKS, "mcp", "--record", record];

async function callAll(client, calls) {
  for (const [name, args] of calls) {
    try {
      await client.callTool({ name, arguments: args }, undefined, { timeout: CALL_MS });
    } catch (e) {
      // An unknown tool or bad arguments is a JSON-RPC error: recorded, and that is the point.
      console.log(`  ${name}: ${e.message.split("\n")[0]}`);
    }
  }
}

const cpuCalls = [
  ["get_task", {}],
  ["get_task", { name: "no_such_task" }],
  ["search_zoo", { query: "transpose" }],
  ["search_zoo", { technique: "no_such_technique" }],
  ["read_zoo_entry", { id: "transpose_smem" }],
  ["read_zoo_entry", { id: "no_such_entry" }],
  ["read_ptx_spec", { query: "mbarrier parity wait" }],
  ["read_ptx_spec", { section: "mbarier" }],
  ["read_ptx_spec", {}],
  ["compile", { source: STARTER }],
  ["compile", { source: NOT_CPP }],
  ["simulate", { source: STARTER, workloads: ["33x17x40"] }],
  ["simulate", { source: NOT_CPP, workloads: ["33x17x40"] }],
  ["synccheck", { source: STARTER, engine: "static" }],
  ["synccheck", { source: DIVERGENT_BARRIER, engine: "static" }],
  ["benchmark", { source: STARTER }],
  ["no_such_tool", {}],
];

const sessions = {
  async sdk_stdio_cpu_tools(record) {
    const transport = new StdioClientTransport({
      command: kilnBin(),
      args: kilnArgs(record),
      env: { ...process.env, KILN_RUNNER: "" },
      stderr: "pipe",
    });
    const client = new Client(CLIENT);
    await client.connect(transport, { timeout: 30_000 });
    try {
      await client.listTools(undefined, { timeout: 30_000 });
      await client.readResource({ uri: "kiln://task" }, { timeout: 30_000 });
      await client.getPrompt({ name: "optimize", arguments: { task: "fp16_gemm" } }, { timeout: 30_000 });
      await callAll(client, cpuCalls);
    } finally {
      await client.close().catch(() => {});
      killPid(transport.pid);
    }
  },

  async sdk_http_session(record) {
    const server = await startHttpServer(kilnArgs(record).slice(3));
    try {
      const transport = new StreamableHTTPClientTransport(new URL(server.url));
      const client = new Client(CLIENT);
      await client.connect(transport, { timeout: 30_000 });
      await client.listTools(undefined, { timeout: 30_000 });
      await callAll(client, [
        ["get_task", {}],
        ["read_ptx_spec", { section: "mbarier" }],
        ["compile", { source: NOT_CPP }],
        ["synccheck", { source: DIVERGENT_BARRIER, engine: "static" }],
      ]);
      await transport.terminateSession();
      await client.close();
    } finally {
      await server.stop();
    }
  },

  async inspector_cli_http(record) {
    const server = await startHttpServer(kilnArgs(record).slice(3));
    const dir = path.join(HERE, "node_modules", "@modelcontextprotocol", "inspector-cli", "build");
    const inspector = (...args) => {
      const r = spawnSync(process.execPath, [path.join(dir, "index.js"), server.url, "--transport", "http", ...args],
        { cwd: dir, encoding: "utf8", timeout: 120_000 });
      if (r.status !== 0) throw new Error(`inspector ${args.join(" ")}: exit ${r.status}\n${r.stderr}`);
    };
    try {
      inspector("--method", "tools/list");
      inspector("--method", "tools/call", "--tool-name", "read_zoo_entry", "--tool-arg", "id=transpose_smem");
    } finally {
      await server.stop();
    }
  },

  async claude_mcp_list(record, work) {
    const claude = path.join(HERE, "agents", "node_modules", ".bin", "claude");
    if (!existsSync(claude)) throw new Error(`${claude} missing: run npm ci in tests/integration/agents`);
    const project = path.join(work, "project");
    const home = path.join(work, "home");
    mkdirSync(project, { recursive: true });
    mkdirSync(home, { recursive: true });
    writeFileSync(path.join(project, ".mcp.json"),
      JSON.stringify({ mcpServers: { kiln: { command: kilnBin(), args: kilnArgs(record) } } }));
    // What accepting the trust dialog and the project's MCP server records (as the agents test does).
    writeFileSync(path.join(home, ".claude.json"), JSON.stringify({
      projects: { [project]: { hasTrustDialogAccepted: true, enabledMcpjsonServers: ["kiln"], disabledMcpjsonServers: [] } },
    }));
    const env = { ...process.env, HOME: home, DISABLE_AUTOUPDATER: "1", DISABLE_TELEMETRY: "1",
                  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1", KILN_RUNNER: "" };
    delete env.ANTHROPIC_API_KEY;
    delete env.CLAUDE_CONFIG_DIR;
    const offline = spawnSync("unshare", ["-n", "true"]).status === 0;
    const argv = offline ? ["unshare", "-n", claude, "mcp", "list"] : [claude, "mcp", "list"];
    const r = spawnSync(argv[0], argv.slice(1), { cwd: project, env, encoding: "utf8", timeout: 120_000 });
    if (r.status !== 0 || !/Connected/.test(r.stdout)) throw new Error(`claude mcp list: exit ${r.status}\n${r.stdout}\n${r.stderr}`);
  },
};

// The recording with this machine's paths replaced, so that a re-recording elsewhere differs
// only where kiln's answers do.
function normalize(text, work) {
  const replacements = [[work, "/KILN_GOLDEN_TMP"], [REPO, "/KILN_SOURCE_DIR"], [process.env.HOME ?? "/nonexistent-home", "/KILN_HOME"]];
  let out = text;
  for (const [from, to] of replacements) if (from && from.length > 1) out = out.split(from).join(to);
  return out;
}

async function main() {
  kilnBin(); // fails early with what to set
  const wanted = process.argv.slice(2);
  const names = wanted.length ? wanted : Object.keys(sessions);
  mkdirSync(OUT, { recursive: true });
  for (const name of names) {
    if (!sessions[name]) throw new Error(`no golden session ${name}; there are ${Object.keys(sessions).join(", ")}`);
    const work = mkdtempSync(path.join(tmpdir(), "kiln-golden-"));
    const record = path.join(work, `${name}.jsonl`);
    try {
      console.log(`recording ${name}`);
      // A cache of its own, so compile and synccheck answers name a path the replay maps.
      process.env.KILN_CACHE_DIR = path.join(work, "cache");
      const started = Date.now();
      await sessions[name](record, work);
      const text = normalize(readFileSync(record, "utf8"), work);
      writeFileSync(path.join(OUT, `${name}.jsonl`), text);
      console.log(`  ${text.trim().split("\n").length} lines in ${((Date.now() - started) / 1000).toFixed(1)} s -> tests/sessions/${name}.jsonl`);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e.stack ?? String(e));
    process.exit(1);
  },
);
