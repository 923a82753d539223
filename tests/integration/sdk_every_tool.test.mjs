// Every tool kiln registers (with --test-tools), called through the official TypeScript SDK
// client over stdio for at least one success and one failure. Client.callTool validates each
// result's structuredContent against the tool's outputSchema (AJV), so a result that breaks
// its own schema fails here; the test also checks isError, the shared error object's code,
// and that the text says the error's message. The GPU tools run against `kiln runner` with
// the fake worker (tests/runner/fake_worker.cpp) standing in for kiln-worker.
//
//   KILN_BIN=/path/to/kiln KILN_FAKE_WORKER=/path/to/kiln_fake_worker \
//     node --test sdk_every_tool.test.mjs
// (KILN_FAKE_WORKER defaults to kiln_fake_worker beside KILN_BIN, as in a build tree's bin/.)

import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

import { HERE, kilnBin, killPid, resultText, stopChild, track, withTimeout } from "./harness.mjs";

const REPO = path.resolve(HERE, "..", "..");
const STARTER = path.join(REPO, "tasks", "fp16_gemm", "starter.cu");
const CALL_MS = 240_000; // simulate builds with nvcc; benchmark runs on the fake worker

function fakeWorker() {
  const given = process.env.KILN_FAKE_WORKER;
  const guess = path.join(path.dirname(kilnBin()), "kiln_fake_worker"); // build/bin in a build tree
  const worker = given || guess;
  if (!existsSync(worker)) {
    throw new Error(`no fake worker at ${worker}: build the kiln_fake_worker target, or set KILN_FAKE_WORKER`);
  }
  return worker;
}

/** A candidate that tells the fake worker what to do (tests/runner/runner_fixture.h). */
function fakeSource(mode) {
  return `// fake-worker: ${mode}\n#include <kiln/abi.h>\nextern "C" int kiln_launch(const kiln_tensor*, int, const kiln_scalar*, int, cudaStream_t) { return 0; }\n`;
}

const NOT_CPP = "this is not C++ at all\n";

// __syncthreads under a thread-dependent branch: synccheck's static engine finds it.
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

/** Starts `kiln runner` on a free port with the fake worker; resolves {url, child}. */
async function startRunner(dir) {
  const args = ["runner", "--gpus", "0", "--listen", "127.0.0.1:0", "--worker", fakeWorker(),
    "--cache-dir", path.join(dir, "runner-cache"), "--lock-dir", path.join(dir, "locks")];
  mkdirSync(path.join(dir, "locks"), { recursive: true });
  const child = track(spawn(kilnBin(), args, { stdio: ["ignore", "ignore", "pipe"] }));
  let stderr = "";
  const ready = new Promise((resolve, reject) => {
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (d) => {
      if (stderr.length < 64 * 1024) stderr += d;
      const m = /kiln: runner listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(stderr);
      if (m) resolve(m[1]);
    });
    child.once("exit", (code) => reject(new Error(`kiln runner exited (${code}) before listening:\n${stderr}`)));
  });
  const url = await withTimeout(ready, 15_000, `kiln runner listening; stderr:\n${stderr}`);
  return { url, child };
}

/** The cases of every tool; resultId is a passing full benchmark's, jobs the wait_job ids. */
function cases(simWorkload, resultId, jobs) {
  const record = { result_id: resultId, name: "kept", approach: "smem_tiling: 64x64", hypothesis: "tiles", reason: "faster" };
  return {
    get_task: [
      { what: "the run's task", args: {} },
      { what: "an unknown task", args: { name: "no_such_task" }, code: "not_found" },
    ],
    search_zoo: [
      { what: "a query", args: { query: "transpose" } },
      { what: "an unknown technique", args: { technique: "no_such_technique" }, code: "invalid_arguments" },
    ],
    read_zoo_entry: [
      { what: "an entry", args: { id: "transpose_smem" } },
      { what: "an unknown entry", args: { id: "no_such_entry" }, code: "not_found" },
    ],
    read_ptx_spec: [
      { what: "a query", args: { query: "mbarrier parity wait" } },
      { what: "an unknown section", args: { section: "mbarier" }, code: "not_found" },
      { what: "nothing to look up", args: {}, code: "invalid_arguments" },
    ],
    compile: [
      { what: "the starter", args: { candidate: STARTER } },
      { what: "a compile error", args: { source: NOT_CPP }, code: "compile_error" },
    ],
    simulate: [
      { what: "the starter", args: { candidate: STARTER, workloads: [simWorkload] } },
      { what: "outputs never written", args: { source: fakeSource("pass"), workloads: [simWorkload] }, code: "wrong_answer" },
      { what: "a compile error", args: { source: NOT_CPP }, code: "compile_error" },
    ],
    synccheck: [
      { what: "clean", args: { candidate: STARTER } },
      { what: "findings are a success", args: { source: DIVERGENT_BARRIER } },
      { what: "gpu engine findings", args: { source: fakeSource("sanitize_findings"), engine: "gpu" } },
      { what: "a compile error", args: { source: NOT_CPP }, code: "compile_error" },
    ],
    racecheck: [
      { what: "clean", args: { source: fakeSource("pass") } },
      { what: "findings are a success", args: { source: fakeSource("sanitize_findings") } },
      { what: "a build error on the runner", args: { source: fakeSource("build_error") }, code: "compile_error" },
    ],
    benchmark: [
      { what: "a passing candidate", args: { source: fakeSource("pass") } },
      { what: "a failing workload", args: { source: fakeSource("fail") }, code: "wrong_answer" },
      { what: "a build error", args: { source: fakeSource("build_error") }, code: "compile_error" },
    ],
    profile: [
      { what: "a passing candidate", args: { source: fakeSource("pass") } },
      { what: "an unknown workload", args: { source: fakeSource("pass"), workload: "1x1x1" }, code: "not_found" },
    ],
    record_candidate: [
      { what: "a passing full benchmark", args: record },
      { what: "a result kiln never stored", args: { ...record, result_id: "r-0123456789abcdef", name: "unknown" }, code: "refused" },
      { what: "numbers from the agent", args: { result_id: resultId, geomean: 9 }, code: "invalid_arguments" },
    ],
    list_frontier: [
      { what: "the frontier", args: {} },
      { what: "a zero limit", args: { limit: 0 }, code: "invalid_arguments" },
    ],
    test_wait: [
      { what: "no wait", args: { duration_ms: 0, steps: 1 } },
      { what: "no steps", args: { duration_ms: 0 }, code: "invalid_arguments" },
      { what: "running past wait_s", args: { duration_ms: 60_000, steps: 1, wait_s: 0 } },
    ],
    wait_job: [
      { what: "a finished job", args: { job_id: jobs.finished, wait_s: 30 } },
      { what: "a job still at work", args: { job_id: jobs.running, wait_s: 0 } },
      { what: "an unknown job", args: { job_id: "job-0123456789abcdef" }, code: "not_found" },
    ],
  };
}

describe("stdio: every tool through the SDK client, success and failure", () => {
  let dir;
  let runner;
  let client;
  let pid;
  let stderr = "";
  let tools = [];

  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), "kiln-every-tool-"));
    runner = await startRunner(dir);
    const runDir = path.join(dir, "run");
    mkdirSync(path.join(runDir, "worktree", "candidates", "fp16_gemm", "scratch"), { recursive: true });
    writeFileSync(path.join(runDir, "worktree", "candidates", "fp16_gemm", "scratch", "kernel.cu"), "// starter\n");
    execFileSync("git", ["init", "-q", path.join(runDir, "worktree")]);
    const transport = new StdioClientTransport({
      command: kilnBin(),
      args: ["mcp", "--test-tools", "--run-dir", runDir],
      env: { ...process.env, KILN_RUNNER: runner.url, KILN_CACHE_DIR: path.join(dir, "cache") },
      stderr: "pipe",
    });
    transport.stderr?.on("data", (d) => {
      if (stderr.length < 256 * 1024) stderr += d;
    });
    client = new Client({ name: "kiln-integration-every-tool", version: "0.0.0" });
    await client.connect(transport, { timeout: 15_000 });
    pid = transport.pid;
    tools = (await client.listTools(undefined, { timeout: 10_000 })).tools;
  }, { timeout: 40_000 });

  after(async () => {
    await client?.close().catch(() => {});
    killPid(pid);
    await stopChild(runner?.child);
    if (dir) rmSync(dir, { recursive: true, force: true });
  }, { timeout: 20_000 });

  test("each tool's results validate against its outputSchema, isError as README.md says", { timeout: 900_000 }, async () => {
    const call = (name, args) => client.callTool({ name, arguments: args }, undefined, { timeout: CALL_MS });
    const bench = await call("benchmark", { source: fakeSource("pass") + "// recorded\n" });
    assert.equal(bench.isError, false, `benchmark for record_candidate: ${resultText(bench)}\nkiln stderr:\n${stderr}`);
    const task = await call("get_task", {});
    const jobs = {};
    for (const [key, ms] of [["finished", 200], ["running", 60_000]]) {
      const r = await call("test_wait", { duration_ms: ms, steps: 1, wait_s: 0 });
      assert.equal(r.structuredContent.status, "running", resultText(r));
      jobs[key] = r.structuredContent.job_id;
    }
    const all = cases(task.structuredContent.sim_workloads[0].name, bench.structuredContent.result_id, jobs);
    const names = tools.map((t) => t.name);
    const missing = names.filter((n) => !all[n]);
    assert.deepEqual(missing, [], `tools without cases in sdk_every_tool.test.mjs: add a success and a failure for each`);
    for (const name of names) {
      const list = all[name];
      assert.ok(list.some((c) => !c.code), `${name}: no successful case`);
      assert.ok(list.some((c) => c.code), `${name}: no failing case`);
      for (const c of list) {
        const where = `${name} (${c.what})`;
        let result;
        try {
          result = await call(name, c.args); // the SDK validates structuredContent here
        } catch (e) {
          assert.fail(`${where}: ${e.message}\nkiln stderr:\n${stderr.slice(-4000)}`);
        }
        assert.equal(typeof result.structuredContent, "object", `${where}: no structuredContent`);
        const text = resultText(result);
        assert.equal(result.isError === true, Boolean(c.code), `${where}: isError ${result.isError}\n${text}`);
        const error = result.structuredContent.error;
        if (!c.code) {
          assert.equal(error, undefined, `${where}: a success with an error object: ${JSON.stringify(error)}`);
          continue;
        }
        assert.equal(error?.code, c.code, `${where}: ${JSON.stringify(error)}\n${text}`);
        assert.ok(text.includes(error.message), `${where}: the text does not say the error's message\n${text}`);
        assert.ok(text.includes(error.next_step), `${where}: the text does not say the next step\n${text}`);
      }
    }
  });
});
