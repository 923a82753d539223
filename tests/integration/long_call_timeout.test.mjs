// A call longer than the SDK client's default request timeout (60 s) still gets its result,
// both ways README.md ("Long calls") describes: a client that sends a progressToken and resets
// its timeout on progress waits through kiln's progress (every <= 10 s); a client that does
// neither gets status "running" within wait_s (default 45 s) and the result from wait_job. Both
// run at once against test_wait for 70 s, so the file takes about 75 s (label `slow`).
//
//   KILN_BIN=/path/to/kiln node --test long_call_timeout.test.mjs

import assert from "node:assert/strict";
import { test } from "node:test";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { DEFAULT_REQUEST_TIMEOUT_MSEC } from "@modelcontextprotocol/sdk/shared/protocol.js";

import { kilnBin, killPid, resultText } from "./harness.mjs";

const WORK_MS = 70_000;
const STEPS = 7;

test("a 70 s call through the SDK at its default timeout gets its result", { timeout: 110_000 }, async () => {
  assert.equal(DEFAULT_REQUEST_TIMEOUT_MSEC, 60_000, "the SDK's default timeout this test is about");
  assert.ok(WORK_MS > DEFAULT_REQUEST_TIMEOUT_MSEC);
  const transport = new StdioClientTransport({ command: kilnBin(), args: ["mcp", "--test-tools"], stderr: "pipe" });
  let stderr = "";
  transport.stderr?.on("data", (d) => {
    if (stderr.length < 64 * 1024) stderr += d;
  });
  const client = new Client({ name: "kiln-integration-long-call-timeout", version: "0.0.0" });
  await client.connect(transport);
  const pid = transport.pid;
  const work = { name: "test_wait", arguments: { duration_ms: WORK_MS, steps: STEPS } };
  const finished = { completed_steps: STEPS, cancelled: false };
  try {
    const started = Date.now();
    // 1. Progress resets the timeout: the whole 70 s in one call (wait_s above the work).
    const progress = [];
    const throughProgress = client
      .callTool({ ...work, arguments: { ...work.arguments, wait_s: 120 } }, undefined, {
        onprogress: (p) => progress.push(p),
        resetTimeoutOnProgress: true,
      })
      .then((r) => ({ r, at: Date.now() - started }));
    // 2. No progressToken, no reset: the running answer within wait_s, then wait_job.
    const throughWaitJob = (async () => {
      const first = await client.callTool(work);
      assert.equal(first.structuredContent?.status, "running", `${resultText(first)}\nkiln stderr:\n${stderr}`);
      const firstAt = Date.now() - started;
      assert.ok(firstAt < DEFAULT_REQUEST_TIMEOUT_MSEC, `the running answer came after ${firstAt} ms`);
      let r = await client.callTool({ name: "wait_job", arguments: { job_id: first.structuredContent.job_id } });
      while (r.structuredContent?.status === "running") {
        r = await client.callTool({ name: "wait_job", arguments: { job_id: first.structuredContent.job_id } });
      }
      return { r, at: Date.now() - started, firstAt };
    })();
    const [a, b] = await Promise.all([throughProgress, throughWaitJob]);
    assert.equal(a.r.isError, false, resultText(a.r));
    assert.deepEqual(a.r.structuredContent, finished, resultText(a.r));
    assert.ok(a.at > DEFAULT_REQUEST_TIMEOUT_MSEC, `the call through progress took only ${a.at} ms`);
    assert.ok(progress.length >= STEPS - 1, `progress notifications seen: ${progress.length}`);
    assert.equal(b.r.isError, false, resultText(b.r));
    assert.deepEqual(b.r.structuredContent, finished, resultText(b.r));
    assert.ok(b.at > DEFAULT_REQUEST_TIMEOUT_MSEC, `the wait_job path took only ${b.at} ms`);
  } finally {
    await client.close().catch(() => {});
    killPid(pid);
  }
});
