// Long calls through the official SDK client (README.md, "Long calls"): a tool whose work
// outlasts wait_s answers status "running" with a job_id, and wait_job returns the finished
// result, from the same session, from a new HTTP session of the same kiln process, and, with
// --run-dir, from a new kiln process; and in stateless 2026-07-28 requests. A cancelled wait_job
// leaves the job at work.
//
//   KILN_BIN=/path/to/kiln node --test long_calls.test.mjs

import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, describe, test } from "node:test";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

import { kilnBin, killPid, postRpc, resultText, startHttpServer, withTimeout } from "./harness.mjs";

const T = { timeout: 60_000 };
const OPTS = { timeout: 30_000 };

async function stdioClient(args) {
  const transport = new StdioClientTransport({ command: kilnBin(), args: ["mcp", "--test-tools", ...args], stderr: "pipe" });
  let stderr = "";
  transport.stderr?.on("data", (d) => {
    if (stderr.length < 64 * 1024) stderr += d;
  });
  const client = new Client({ name: "kiln-integration-long-calls", version: "0.0.0" });
  await client.connect(transport, { timeout: 15_000 });
  const pid = transport.pid;
  return {
    client,
    stderr: () => stderr,
    async close() {
      await client.close().catch(() => {});
      killPid(pid);
    },
  };
}

async function httpClient(url) {
  const transport = new StreamableHTTPClientTransport(new URL(url));
  const client = new Client({ name: "kiln-integration-long-calls-http", version: "0.0.0" });
  await client.connect(transport, { timeout: 15_000 });
  return {
    client,
    async close() {
      await withTimeout(transport.terminateSession(), 5_000, "DELETE session").catch(() => {});
      await client.close().catch(() => {});
    },
  };
}

/** A test_wait call that outlasts wait_s 0: the running answer, checked; resolves its job_id. */
async function startRunning(client, durationMs) {
  const r = await client.callTool({ name: "test_wait", arguments: { duration_ms: durationMs, steps: 3, wait_s: 0 } }, undefined, OPTS);
  assert.equal(r.isError, false, resultText(r));
  const sc = r.structuredContent;
  assert.equal(sc.status, "running", JSON.stringify(sc));
  assert.equal(sc.tool, "test_wait");
  assert.match(sc.job_id, /^job-[0-9a-f]{16}$/);
  assert.deepEqual(sc.next_call, { name: "wait_job", arguments: { job_id: sc.job_id } });
  assert.ok(resultText(r).includes(sc.job_id), resultText(r));
  return sc.job_id;
}

/** wait_job until the work is done; asserts test_wait's finished result. */
async function expectFinished(client, jobId) {
  const r = await client.callTool({ name: "wait_job", arguments: { job_id: jobId, wait_s: 20 } }, undefined, OPTS);
  assert.equal(r.isError, false, resultText(r));
  assert.deepEqual(r.structuredContent, { completed_steps: 3, cancelled: false }, resultText(r));
  assert.equal(resultText(r), "completed 3 of 3 steps");
}

describe("long calls: wait_s and wait_job", () => {
  const dirs = [];
  after(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  test("stdio: a call past wait_s answers running, wait_job returns its result", T, async () => {
    const c = await stdioClient([]);
    try {
      const list = (await c.client.listTools(undefined, OPTS)).tools;
      const wait = list.find((t) => t.name === "wait_job");
      assert.ok(wait, "wait_job is listed");
      assert.ok(list.find((t) => t.name === "benchmark").inputSchema.properties.wait_s, "benchmark takes wait_s");
      const id = await startRunning(c.client, 1500);
      const still = await c.client.callTool({ name: "wait_job", arguments: { job_id: id, wait_s: 0 } }, undefined, OPTS);
      assert.equal(still.structuredContent.status, "running", resultText(still));
      await expectFinished(c.client, id);
      const unknown = await c.client.callTool({ name: "wait_job", arguments: { job_id: "job-0123456789abcdef" } }, undefined, OPTS);
      assert.equal(unknown.isError, true);
      assert.equal(unknown.structuredContent.error.code, "not_found");
    } finally {
      await c.close();
    }
  });

  test("stdio: a cancelled wait_job leaves the job at work", T, async () => {
    const c = await stdioClient([]);
    try {
      const id = await startRunning(c.client, 1500);
      const abort = new AbortController();
      const waiting = c.client.callTool({ name: "wait_job", arguments: { job_id: id, wait_s: 20 } }, undefined, { ...OPTS, signal: abort.signal });
      setTimeout(() => abort.abort("the test gives up"), 200);
      await assert.rejects(waiting);
      await expectFinished(c.client, id);
    } finally {
      await c.close();
    }
  });

  test("HTTP: a new session of the same kiln process gets the result", T, async () => {
    const server = await startHttpServer(["--test-tools"]);
    try {
      const first = await httpClient(server.url);
      const id = await startRunning(first.client, 1000);
      await first.close();
      const second = await httpClient(server.url);
      try {
        await expectFinished(second.client, id);
      } finally {
        await second.close();
      }
    } finally {
      await server.stop();
    }
  });

  test("HTTP, 2026-07-28: a stateless request answers running, a later one gets the result", T, async () => {
    const server = await startHttpServer(["--test-tools"]);
    const v = "2026-07-28";
    const meta = { "io.modelcontextprotocol/protocolVersion": v, "io.modelcontextprotocol/clientCapabilities": {} };
    const call = async (id, name, args) => {
      const headers = { "MCP-Protocol-Version": v, "Mcp-Method": "tools/call", "Mcp-Name": name };
      const r = await postRpc(server.url, { jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args, _meta: meta } }, headers, 30_000);
      const answer = r.messages.find((m) => m.id === id);
      assert.ok(answer?.result, `HTTP ${r.status}: ${r.raw.slice(0, 2000)}`);
      return answer.result;
    };
    try {
      const running = await call(1, "test_wait", { duration_ms: 1000, steps: 3, wait_s: 0 });
      assert.equal(running.resultType, "complete");
      assert.equal(running.structuredContent.status, "running", JSON.stringify(running));
      const done = await call(2, "wait_job", { job_id: running.structuredContent.job_id, wait_s: 20 });
      assert.deepEqual(done.structuredContent, { completed_steps: 3, cancelled: false }, JSON.stringify(done));
    } finally {
      await server.stop();
    }
  });

  test("--run-dir: a new kiln process gets a finished result; a job that was cut short says so", T, async () => {
    const runDir = mkdtempSync(path.join(tmpdir(), "kiln-long-calls-"));
    dirs.push(runDir);
    const first = await stdioClient(["--run-dir", runDir]);
    let done;
    let cut;
    try {
      done = await startRunning(first.client, 300);
      await expectFinished(first.client, done);
      cut = await startRunning(first.client, 30_000);
    } finally {
      await first.close();
    }
    assert.deepEqual(readdirSync(path.join(runDir, "jobs")).sort(), [`${cut}.json`, `${done}.json`].sort());
    const second = await stdioClient(["--run-dir", runDir]);
    try {
      await expectFinished(second.client, done);
      const lost = await second.client.callTool({ name: "wait_job", arguments: { job_id: cut, wait_s: 0 } }, undefined, OPTS);
      assert.equal(lost.isError, true, resultText(lost));
      assert.equal(lost.structuredContent.error.code, "run_failed");
      assert.match(resultText(lost), /call test_wait again/);
    } finally {
      await second.close();
    }
  });
});
