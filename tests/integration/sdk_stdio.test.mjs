// The official TypeScript SDK drives `kiln mcp --test-tools` over stdio, plus raw
// newline-delimited JSON-RPC checks a client library would hide.
//
//   KILN_BIN=/path/to/kiln node --test sdk_stdio.test.mjs

import assert from "node:assert/strict";
import { after, describe, test } from "node:test";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

import { NEWEST_VERSION, SUPPORTED_VERSIONS, kilnBin, killPid, startRawStdio, waitExit } from "./harness.mjs";
import { T, registerSdkTests, tapIncoming } from "./sdk_common.mjs";

async function connectStdio() {
  const transport = new StdioClientTransport({
    command: kilnBin(),
    args: ["mcp", "--test-tools"],
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (d) => {
    if (stderr.length < 64 * 1024) stderr += d;
  });
  // Client.connect() hands the negotiated revision to transports that accept it.
  let negotiated;
  transport.setProtocolVersion = (v) => {
    negotiated = v;
  };
  const client = new Client({ name: "kiln-integration-sdk-stdio", version: "0.0.0" });
  const errors = [];
  client.onerror = (e) => errors.push(e);
  try {
    await client.connect(transport, { timeout: 15_000 });
  } catch (e) {
    const pid = transport.pid;
    await client.close().catch(() => {});
    killPid(pid);
    throw new Error(`connect over stdio failed: ${e.message}\nkiln stderr:\n${stderr}`);
  }
  const pid = transport.pid;
  const incoming = tapIncoming(transport);
  return {
    client,
    transport,
    errors,
    incoming,
    negotiatedVersion: () => negotiated,
    stderr: () => stderr,
    async close() {
      await client.close().catch(() => {}); // ends stdin, then SIGTERM/SIGKILL after 2 s each
      killPid(pid);
    },
  };
}

registerSdkTests("stdio", connectStdio);

describe("stdio: raw JSON-RPC", () => {
  const sessions = [];
  const open = (...a) => {
    const s = startRawStdio(...a);
    sessions.push(s);
    return s;
  };
  after(async () => {
    await Promise.all(sessions.map((s) => s.stop()));
  });

  for (const version of SUPPORTED_VERSIONS) {
    test(`initialize with ${version} is echoed`, T, async () => {
      const s = open();
      const resp = await s.initialize(version);
      assert.equal(resp.result?.protocolVersion, version, `initialize answer: ${JSON.stringify(resp)}`);
      assert.equal(resp.result?.serverInfo?.name, "kiln");
      await s.stop();
    });
  }

  test("initialize with an unknown revision answers the newest", T, async () => {
    const s = open();
    const resp = await s.initialize("2024-01-01");
    assert.equal(resp.result?.protocolVersion, NEWEST_VERSION, `initialize answer: ${JSON.stringify(resp)}`);
    await s.stop();
  });

  test("server/discover (2026-07-28) is answered without initialize, and initialize still works after it", T, async () => {
    const s = open();
    const meta = {
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientInfo": { name: "kiln-test", version: "1" },
      "io.modelcontextprotocol/clientCapabilities": {},
    };
    const t0 = Date.now();
    const resp = await s.request("server/discover", { _meta: meta }, 3_000);
    assert.deepEqual(resp.result?.supportedVersions, ["2026-07-28"], `answer: ${JSON.stringify(resp)}`);
    assert.equal(resp.result?.resultType, "complete");
    assert.equal(resp.result?._meta?.["io.modelcontextprotocol/serverInfo"]?.name, "kiln");
    assert.ok(Date.now() - t0 < 2_000, "server/discover answer was slow");
    const tools = await s.request("tools/list", { _meta: meta });
    assert.ok(tools.result?.tools?.some((t) => t.name === "get_task"), `tools/list: ${JSON.stringify(tools).slice(0, 300)}`);
    assert.equal(tools.result?.cacheScope, "private");
    // A probe without the 2026 _meta is refused at once (-32602), and the connection stays
    // usable for the fallback initialize.
    const bare = await s.request("server/discover", {}, 3_000);
    assert.equal(bare.error?.code, -32602, `answer: ${JSON.stringify(bare)}`);
    const init = await s.initialize();
    assert.equal(init.result?.protocolVersion, NEWEST_VERSION);
    await s.stop();
  });

  test("malformed input: parse error -32700, unknown method -32601", T, async () => {
    const s = open();
    await s.initialize();
    const unknown = await s.request("no/such_method", {});
    assert.equal(unknown.error?.code, -32601, `unknown method answer: ${JSON.stringify(unknown)}`);
    s.child.stdin.write("{this is not json\n");
    const deadline = Date.now() + 5_000;
    let parseError;
    while (!parseError && Date.now() < deadline) {
      parseError = s.messages.find((m) => m.error?.code === -32700);
      if (!parseError) await new Promise((r) => setTimeout(r, 50));
    }
    assert.ok(parseError, `no -32700 answer to a non-JSON line; stdout so far: ${JSON.stringify(s.lines)}`);
    assert.equal(parseError.id, null, "a parse error answer carries id null");
    // Still alive and answering.
    const ping = await s.request("ping");
    assert.deepEqual(ping.result, {}, `ping after garbage: ${JSON.stringify(ping)}`);
    await s.stop();
  });

  test("stdout carries only JSON-RPC messages; stdin EOF ends the process with status 0", T, async () => {
    const s = open();
    await s.initialize();
    const list = await s.request("tools/list", {});
    assert.ok(Array.isArray(list.result?.tools), JSON.stringify(list).slice(0, 300));
    const task = await s.request("tools/call", { name: "get_task", arguments: {} }, 15_000);
    assert.ok(task.result, JSON.stringify(task).slice(0, 300));
    const wait = await s.request("tools/call", {
      name: "test_wait",
      arguments: { duration_ms: 30, steps: 3 },
      _meta: { progressToken: "tok-1" },
    });
    assert.equal(wait.result?.structuredContent?.completed_steps, 3, JSON.stringify(wait));
    const progress = s.messages.filter((m) => m.method === "notifications/progress");
    assert.deepEqual(
      progress.map((m) => [m.params.progressToken, m.params.progress, m.params.total]),
      [["tok-1", 1, 3], ["tok-1", 2, 3], ["tok-1", 3, 3]],
      "progress notifications echo the string progressToken",
    );
    assert.deepEqual(s.badLines, [], "non-JSON-RPC lines on stdout (logs must go to stderr)");

    s.child.stdin.end();
    const exit = await waitExit(s.child, 5_000);
    assert.ok(exit, `kiln mcp still running 5 s after stdin EOF; stderr:\n${s.stderr()}`);
    assert.equal(exit.code, 0, `exit after EOF: ${JSON.stringify(exit)}; stderr:\n${s.stderr()}`);
    assert.deepEqual(s.badLines, [], "non-JSON-RPC lines on stdout at shutdown");
  });
});
