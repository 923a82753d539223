// The official TypeScript SDK drives `kiln mcp --http 127.0.0.1:0 --test-tools` over
// Streamable HTTP, plus raw fetch checks of the transport rules (sessions, Origin,
// MCP-Protocol-Version, GET, DELETE, JSON vs SSE responses).
//
//   KILN_BIN=/path/to/kiln node --test sdk_http.test.mjs

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

import {
  NEWEST_VERSION,
  SUPPORTED_VERSIONS,
  describeExchange,
  initializeBody,
  openRawSession,
  postRpc,
  readRpcResponse,
  startHttpServer,
  withTimeout,
} from "./harness.mjs";
import { T, registerSdkTests, tapIncoming } from "./sdk_common.mjs";

// One server for the whole file, started on first use, stopped at the end.
let serverPromise;
const server = () => (serverPromise ??= startHttpServer(["--test-tools"]));

async function connectHttp() {
  const srv = await server();
  const transport = new StreamableHTTPClientTransport(new URL(srv.url));
  const client = new Client({ name: "kiln-integration-sdk-http", version: "0.0.0" });
  const errors = [];
  client.onerror = (e) => errors.push(e);
  try {
    await client.connect(transport, { timeout: 15_000 });
  } catch (e) {
    await client.close().catch(() => {});
    throw new Error(`connect over HTTP failed: ${e.message}\nkiln stderr:\n${srv.stderr()}`);
  }
  const incoming = tapIncoming(transport);
  return {
    client,
    transport,
    errors,
    incoming,
    negotiatedVersion: () => transport.protocolVersion,
    async close() {
      await withTimeout(transport.terminateSession(), 5_000, "DELETE session").catch(() => {});
      await client.close().catch(() => {});
    },
  };
}

const rpc = (id, method, params = {}) => ({ jsonrpc: "2.0", id, method, params });

describe("http", () => {
  before(async () => {
    await server();
  }, { timeout: 20_000 });

  after(async () => {
    const srv = await serverPromise?.catch(() => undefined);
    await srv?.stop();
  }, { timeout: 10_000 });

  registerSdkTests("http", connectHttp);

  describe("http: SDK session end", () => {
    test("terminateSession (DELETE) ends the session; the old id then gets 404", T, async () => {
      const srv = await server();
      const conn = await connectHttp();
      try {
        const sid = conn.transport.sessionId;
        assert.ok(sid, "SDK transport has no session id after connect");
        assert.deepEqual(await conn.client.ping({ timeout: 5_000 }), {});
        await withTimeout(conn.transport.terminateSession(), 5_000, "terminateSession");
        const r = await postRpc(srv.url, rpc(7, "ping"), { "mcp-session-id": sid, "mcp-protocol-version": NEWEST_VERSION });
        assert.equal(r.status, 404, describeExchange(`POST ping with terminated session ${sid}`, r));
      } finally {
        await conn.client.close().catch(() => {});
      }
    });
  });

  describe("http: transport rules (raw fetch)", () => {
    for (const version of SUPPORTED_VERSIONS) {
      test(`initialize with ${version}: echoed, Mcp-Session-Id issued, initialized -> 202`, T, async () => {
        const srv = await server();
        const s = await openRawSession(srv.url, version);
        assert.equal(s.protocolVersion, version, describeExchange("initialize", s.init));
        assert.match(s.sessionId, /^[\x21-\x7e]+$/, "Mcp-Session-Id must be visible ASCII");
        assert.equal(s.initializedStatus, 202, "POST notifications/initialized should answer 202 Accepted");
      });
    }

    test("initialize with an unknown revision answers the newest", T, async () => {
      const srv = await server();
      const s = await openRawSession(srv.url, "2024-01-01");
      assert.equal(s.protocolVersion, NEWEST_VERSION, describeExchange("initialize 2024-01-01", s.init));
    });

    test("request without Mcp-Session-Id -> 400", T, async () => {
      const srv = await server();
      await openRawSession(srv.url);
      const r = await postRpc(srv.url, rpc(2, "tools/list"), { "mcp-protocol-version": NEWEST_VERSION });
      assert.equal(r.status, 400, describeExchange("POST tools/list without Mcp-Session-Id", r));
    });

    test("unknown Mcp-Session-Id -> 404", T, async () => {
      const srv = await server();
      const r = await postRpc(srv.url, rpc(2, "tools/list"), {
        "mcp-session-id": "no-such-session-0000",
        "mcp-protocol-version": NEWEST_VERSION,
      });
      assert.equal(r.status, 404, describeExchange("POST tools/list with Mcp-Session-Id: no-such-session-0000", r));
    });

    test("Origin not in the allow-list -> 403", T, async () => {
      const srv = await server();
      const init = await postRpc(srv.url, initializeBody(1), { origin: "http://evil.example" });
      assert.equal(init.status, 403, describeExchange("POST initialize with Origin: http://evil.example", init));
      const s = await openRawSession(srv.url);
      const r = await postRpc(srv.url, rpc(2, "tools/list"), {
        origin: "http://evil.example",
        "mcp-session-id": s.sessionId,
        "mcp-protocol-version": NEWEST_VERSION,
      });
      assert.equal(r.status, 403, describeExchange("POST tools/list in a valid session with Origin: http://evil.example", r));
    });

    test("unsupported MCP-Protocol-Version header -> 400; a supported one works", T, async () => {
      const srv = await server();
      const s = await openRawSession(srv.url, "2025-06-18");
      const bad = await postRpc(srv.url, rpc(2, "tools/list"), { "mcp-session-id": s.sessionId, "mcp-protocol-version": "1999-01-01" });
      assert.equal(bad.status, 400, describeExchange("POST tools/list with MCP-Protocol-Version: 1999-01-01", bad));
      const good = await postRpc(srv.url, rpc(3, "tools/list"), { "mcp-session-id": s.sessionId, "mcp-protocol-version": "2025-06-18" });
      assert.equal(good.status, 200, describeExchange("POST tools/list with MCP-Protocol-Version: 2025-06-18", good));
      const msg = good.messages.find((m) => m.id === 3);
      assert.ok(Array.isArray(msg?.result?.tools), describeExchange("tools/list result", good));
    });

    test("GET /mcp -> 405 (no standalone SSE stream)", T, async () => {
      const srv = await server();
      const s = await openRawSession(srv.url);
      const res = await withTimeout(
        fetch(srv.url, {
          method: "GET",
          headers: { accept: "text/event-stream", "mcp-session-id": s.sessionId, "mcp-protocol-version": NEWEST_VERSION },
        }),
        5_000,
        "GET /mcp",
      );
      const r = await readRpcResponse(res, 5_000).catch((e) => ({ status: res.status, contentType: res.headers.get("content-type"), raw: String(e) }));
      assert.equal(r.status, 405, describeExchange("GET /mcp with a valid session and Accept: text/event-stream", r));
    });

    test("DELETE /mcp ends the session; the id then gets 404", T, async () => {
      const srv = await server();
      const s = await openRawSession(srv.url);
      const del = await withTimeout(
        fetch(srv.url, { method: "DELETE", headers: { "mcp-session-id": s.sessionId, "mcp-protocol-version": NEWEST_VERSION } }),
        5_000,
        "DELETE /mcp",
      );
      await del.text();
      assert.ok(del.status === 200 || del.status === 204, `DELETE /mcp answered HTTP ${del.status}`);
      const r = await postRpc(srv.url, rpc(2, "ping"), { "mcp-session-id": s.sessionId, "mcp-protocol-version": NEWEST_VERSION });
      assert.equal(r.status, 404, describeExchange("POST ping after DELETE", r));
    });

    test("POST answers JSON or SSE; a call with progress streams SSE: progress 1..3 then the result", T, async () => {
      const srv = await server();
      const s = await openRawSession(srv.url);
      const h = { "mcp-session-id": s.sessionId, "mcp-protocol-version": NEWEST_VERSION };

      const list = await postRpc(srv.url, rpc(2, "tools/list"), h);
      assert.equal(list.status, 200, describeExchange("tools/list", list));
      assert.ok(/application\/json|text\/event-stream/.test(list.contentType), describeExchange("tools/list content type", list));
      assert.ok(list.messages.find((m) => m.id === 2)?.result, describeExchange("tools/list", list));

      const call = await postRpc(
        srv.url,
        rpc(3, "tools/call", { name: "test_wait", arguments: { duration_ms: 150, steps: 3 }, _meta: { progressToken: 42 } }),
        h,
        15_000,
      );
      assert.equal(call.status, 200, describeExchange("tools/call test_wait", call));
      assert.match(call.contentType, /text\/event-stream/, describeExchange("tools/call test_wait with a progressToken", call));
      const kinds = call.messages.map((m) => (m.method === "notifications/progress" ? `progress ${m.params.progress}/${m.params.total} token ${m.params.progressToken}` : m.id === 3 ? "result" : JSON.stringify(m)));
      assert.deepEqual(kinds, ["progress 1/3 token 42", "progress 2/3 token 42", "progress 3/3 token 42", "result"], describeExchange("SSE events", call));
      const result = call.messages.at(-1).result;
      assert.equal(result?.structuredContent?.completed_steps, 3, describeExchange("test_wait result", call));
    });

    test("POST without Accept: text/event-stream is refused or answered as JSON", T, async () => {
      // Spec: the client MUST list both; a server may reject (400/406) or answer JSON. Any of
      // these is fine, but it must not hang or answer SSE the client said it cannot read.
      const srv = await server();
      const s = await openRawSession(srv.url);
      const res = await withTimeout(
        fetch(srv.url, {
          method: "POST",
          headers: { "content-type": "application/json", accept: "application/json", "mcp-session-id": s.sessionId, "mcp-protocol-version": NEWEST_VERSION },
          body: JSON.stringify(rpc(2, "ping")),
        }),
        5_000,
        "POST with Accept: application/json only",
      );
      const r = await readRpcResponse(res, 5_000);
      assert.ok(r.status === 400 || r.status === 406 || (r.status === 200 && r.contentType.includes("application/json")), describeExchange("POST ping, Accept: application/json", r));
    });
  });
});
