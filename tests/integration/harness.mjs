// Shared harness for the integration tests: find the kiln binary, start it (stdio or
// Streamable HTTP), speak raw JSON-RPC to it, and make sure every child process dies.
//
// Nothing here fakes the server: every test talks to the real `kiln` named by KILN_BIN.

import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

export const HERE = path.dirname(fileURLToPath(import.meta.url));

/** Protocol revisions kiln must negotiate (README.md, "The binary"). */
export const SUPPORTED_VERSIONS = ["2025-11-25", "2025-06-18", "2025-03-26"];
export const NEWEST_VERSION = "2025-11-25";

/** Absolute path of the kiln binary under test (env KILN_BIN). */
export function kilnBin() {
  const bin = process.env.KILN_BIN;
  if (!bin) {
    throw new Error("KILN_BIN is not set: point it at the kiln binary (ctest sets it to $<TARGET_FILE:kiln>)");
  }
  const abs = path.resolve(bin);
  if (!existsSync(abs)) throw new Error(`KILN_BIN=${bin} does not exist`);
  return abs;
}

// ---------------------------------------------------------------------------------------
// Child-process bookkeeping: everything spawned here is killed on teardown, and, as a last
// resort, when the test process exits.

const children = new Set();

export function track(child) {
  children.add(child);
  child.once("exit", () => children.delete(child));
  return child;
}

function killAllNow() {
  for (const child of children) {
    try {
      child.kill("SIGKILL");
    } catch {
      /* already gone */
    }
  }
}
process.once("exit", killAllNow);
for (const sig of ["SIGINT", "SIGTERM"]) {
  process.once(sig, () => {
    killAllNow();
    process.exit(130);
  });
}

/** True while the process has neither exited nor been killed by a signal. */
export function alive(child) {
  return child.exitCode === null && child.signalCode === null;
}

/** Resolves with {code, signal} once the child exits, or null after ms. */
export function waitExit(child, ms) {
  if (!alive(child)) return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(null), ms);
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal });
    });
  });
}

/** SIGTERM, then SIGKILL after graceMs. Always resolves. */
export async function stopChild(child, graceMs = 2000) {
  if (!child || !alive(child)) return;
  child.kill("SIGTERM");
  if (await waitExit(child, graceMs)) return;
  child.kill("SIGKILL");
  await waitExit(child, 2000);
}

/** Kill by pid (for processes spawned by a client library); ignores "no such process". */
export function killPid(pid) {
  if (!pid) return;
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    /* already gone */
  }
}

// ---------------------------------------------------------------------------------------
// Small utilities.

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Rejects with a message naming `what` if p has not settled within ms. */
export function withTimeout(p, ms, what) {
  let timer;
  const t = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
  });
  return Promise.race([p, t]).finally(() => clearTimeout(timer));
}

/** Collects a stream's text (bounded) for diagnostics. */
function collect(stream, limit = 64 * 1024) {
  const buf = { text: "" };
  stream.setEncoding("utf8");
  stream.on("data", (d) => {
    if (buf.text.length < limit) buf.text += d;
  });
  return buf;
}

/** The text parts of a CallToolResult, joined. */
export function resultText(result) {
  return (result?.content ?? [])
    .filter((c) => c.type === "text")
    .map((c) => c.text)
    .join("\n");
}

// ---------------------------------------------------------------------------------------
// Streamable HTTP server.

const LISTEN_RE = /kiln: listening on (http:\/\/127\.0\.0\.1:(\d+)\/mcp)/;

/**
 * Starts `kiln mcp --http 127.0.0.1:0 [extra]` and waits for the
 * "kiln: listening on http://127.0.0.1:PORT/mcp" line on stderr.
 * Returns {url, port, origin, child, stderr(), stop()}.
 */
export async function startHttpServer(extraArgs = ["--test-tools"], readyMs = 15000) {
  const args = ["mcp", "--http", "127.0.0.1:0", ...extraArgs];
  const child = track(spawn(kilnBin(), args, { stdio: ["ignore", "pipe", "pipe"] }));
  const out = collect(child.stdout);
  const err = { text: "" };
  child.stderr.setEncoding("utf8");
  const ready = new Promise((resolve, reject) => {
    const onData = (d) => {
      if (err.text.length < 256 * 1024) err.text += d;
      const m = LISTEN_RE.exec(err.text);
      if (m) resolve({ url: m[1], port: Number(m[2]) });
    };
    child.stderr.on("data", onData);
    child.once("error", reject);
    child.once("exit", (code, signal) =>
      reject(new Error(`kiln ${args.join(" ")} exited (code ${code}, signal ${signal}) before listening; stderr:\n${err.text}`)),
    );
  });
  let info;
  try {
    info = await withTimeout(ready, readyMs, `"kiln: listening on http://127.0.0.1:PORT/mcp" on stderr of kiln ${args.join(" ")}; stderr so far:\n${err.text}`);
  } catch (e) {
    await stopChild(child);
    throw e;
  }
  return {
    ...info,
    origin: `http://127.0.0.1:${info.port}`,
    child,
    stderr: () => err.text,
    stdout: () => out.text,
    stop: () => stopChild(child),
  };
}

// ---------------------------------------------------------------------------------------
// Raw stdio JSON-RPC session (no SDK), for checks a client library would paper over:
// stdout cleanliness, version negotiation, EOF handling.

export function startRawStdio(extraArgs = ["--test-tools"]) {
  const child = track(spawn(kilnBin(), ["mcp", ...extraArgs], { stdio: ["pipe", "pipe", "pipe"] }));
  const stderr = collect(child.stderr);
  const lines = []; // every stdout line, verbatim
  const badLines = []; // stdout lines that are not JSON-RPC 2.0 messages
  const messages = []; // parsed messages in arrival order
  const waiters = new Map(); // id -> resolve
  const rl = createInterface({ input: child.stdout });
  rl.on("line", (line) => {
    lines.push(line);
    let msg;
    try {
      msg = JSON.parse(line);
    } catch {
      badLines.push(line);
      return;
    }
    if (msg?.jsonrpc !== "2.0") badLines.push(line);
    messages.push(msg);
    if (msg && msg.id !== undefined && (msg.result !== undefined || msg.error !== undefined)) {
      const w = waiters.get(msg.id);
      if (w) {
        waiters.delete(msg.id);
        w(msg);
      }
    }
  });
  child.stdin.on("error", () => {}); // EPIPE if the server died; reported via the exit
  let nextId = 1;
  const send = (obj) => child.stdin.write(JSON.stringify(obj) + "\n");
  return {
    child,
    lines,
    badLines,
    messages,
    stderr: () => stderr.text,
    send,
    /** Sends a request and resolves with the whole response message (result or error). */
    request(method, params, ms = 10000) {
      const id = nextId++;
      const p = new Promise((resolve) => waiters.set(id, resolve));
      send(params === undefined ? { jsonrpc: "2.0", id, method } : { jsonrpc: "2.0", id, method, params });
      return withTimeout(p, ms, `response to ${method} (id ${id}) over stdio; stderr:\n${stderr.text}`);
    },
    notify(method, params) {
      send(params === undefined ? { jsonrpc: "2.0", method } : { jsonrpc: "2.0", method, params });
    },
    async initialize(protocolVersion = NEWEST_VERSION) {
      const resp = await this.request("initialize", {
        protocolVersion,
        capabilities: {},
        clientInfo: { name: "kiln-integration-raw", version: "0.0.0" },
      });
      if (resp.result) this.notify("notifications/initialized");
      return resp;
    },
    stop: () => stopChild(child),
  };
}

// ---------------------------------------------------------------------------------------
// Raw HTTP helpers.

export const ACCEPT_BOTH = "application/json, text/event-stream";

/**
 * Reads a POST response body as JSON-RPC messages: a JSON body (object or batch) or an
 * SSE stream ("data:" lines). Returns {status, headers, contentType, messages, raw}.
 */
export async function readRpcResponse(res, ms = 10000) {
  const contentType = res.headers.get("content-type") ?? "";
  const raw = await withTimeout(res.text(), ms, `body of HTTP ${res.status} response (${contentType})`);
  let messages = [];
  if (contentType.includes("text/event-stream")) {
    for (const event of raw.split(/\r?\n\r?\n/)) {
      const data = event
        .split(/\r?\n/)
        .filter((l) => l.startsWith("data:"))
        .map((l) => l.slice(5).replace(/^ /, ""))
        .join("\n");
      if (data.trim()) messages.push(JSON.parse(data));
    }
  } else if (contentType.includes("application/json") && raw.trim()) {
    const parsed = JSON.parse(raw);
    messages = Array.isArray(parsed) ? parsed : [parsed];
  }
  return { status: res.status, headers: res.headers, contentType, messages, raw };
}

/** POSTs one JSON-RPC message to url with the given extra headers. */
export async function postRpc(url, body, headers = {}, ms = 10000) {
  const res = await withTimeout(
    fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", accept: ACCEPT_BOTH, ...headers },
      body: JSON.stringify(body),
    }),
    ms,
    `POST ${url} ${JSON.stringify(body).slice(0, 200)}`,
  );
  return readRpcResponse(res, ms);
}

export function initializeBody(id = 1, protocolVersion = NEWEST_VERSION) {
  return {
    jsonrpc: "2.0",
    id,
    method: "initialize",
    params: { protocolVersion, capabilities: {}, clientInfo: { name: "kiln-integration-raw", version: "0.0.0" } },
  };
}

/**
 * Opens a raw HTTP session: initialize + notifications/initialized.
 * Returns {sessionId, protocolVersion, init}.
 */
export async function openRawSession(url, protocolVersion = NEWEST_VERSION) {
  const init = await postRpc(url, initializeBody(1, protocolVersion));
  if (init.status !== 200) throw new Error(`initialize answered HTTP ${init.status}: ${init.raw}`);
  const sessionId = init.headers.get("mcp-session-id");
  if (!sessionId) throw new Error(`initialize response carries no Mcp-Session-Id header: ${init.raw}`);
  const negotiated = init.messages.find((m) => m.id === 1)?.result?.protocolVersion;
  const note = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: ACCEPT_BOTH,
      "mcp-session-id": sessionId,
      "mcp-protocol-version": negotiated ?? protocolVersion,
    },
    body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
  });
  await note.text();
  return { sessionId, protocolVersion: negotiated, init, initializedStatus: note.status };
}

/** Describes an HTTP exchange for assertion messages. */
export function describeExchange(what, r) {
  return `${what}\n  -> HTTP ${r.status} ${r.contentType}\n  body: ${String(r.raw).slice(0, 600)}`;
}
