// The real agent clients read what `kiln setup` writes. Claude Code: in the run's worktree,
// `claude mcp list` shows kiln pending approval until the project is trusted (as a user trusts
// it by opening `claude` there once; here, by the same entry in ~/.claude.json), then
// connected, and the session it started is recorded in the run. Codex: with CODEX_HOME at the
// run's .codex, `codex mcp get kiln` shows kiln's command and the long tool timeout. Neither
// needs a model; where `unshare -n` works (root) the clients run without any network.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const KILN = process.env.KILN_BIN;
const here = path.dirname(new URL(import.meta.url).pathname);
const client = (name) => path.join(here, 'node_modules', '.bin', name);
const offline = spawnSync('unshare', ['-n', 'true']).status === 0;

function run(argv, options = {}) {
  const [command, ...args] = offline ? ['unshare', '-n', ...argv] : argv;
  const result = spawnSync(command, args, { encoding: 'utf8', timeout: 90_000, ...options });
  return { code: result.status, out: result.stdout ?? '', err: result.stderr ?? '' };
}

function setupRun() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kiln-agents-'));
  const made = run([KILN, 'setup', '--task', 'fp16_gemm', '--out', dir, '--name', 'run']);
  assert.equal(made.code, 0, made.err);
  return { dir, run: path.join(dir, 'run') };
}

// A HOME of its own, so the user's Claude Code settings and trust play no part.
function claudeEnv(home) {
  const env = { ...process.env, HOME: home, DISABLE_AUTOUPDATER: '1', DISABLE_TELEMETRY: '1',
                CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1' };
  delete env.ANTHROPIC_API_KEY;
  delete env.CLAUDE_CONFIG_DIR;
  return env;
}

test('claude mcp list shows kiln connected in a trusted run, through the 2026 path, and records the session', () => {
  assert.ok(KILN, 'KILN_BIN must name the kiln binary');
  const { dir, run: runDir } = setupRun();
  const worktree = path.join(runDir, 'worktree');
  const home = path.join(dir, 'home');
  fs.mkdirSync(home);
  try {
    const before = run([client('claude'), 'mcp', 'list'], { cwd: worktree, env: claudeEnv(home) });
    assert.equal(before.code, 0, before.err);
    assert.match(before.out, /kiln: .*mcp --run-dir .* Pending approval/);

    // What accepting the trust dialog and the project's MCP server records.
    const settingsFile = path.join(home, '.claude.json');
    const settings = fs.existsSync(settingsFile) ? JSON.parse(fs.readFileSync(settingsFile)) : {};
    settings.projects = { [worktree]: { hasTrustDialogAccepted: true,
                                        enabledMcpjsonServers: ['kiln'],
                                        disabledMcpjsonServers: [] } };
    fs.writeFileSync(settingsFile, JSON.stringify(settings));

    const after = run([client('claude'), 'mcp', 'list'], { cwd: worktree, env: claudeEnv(home) });
    assert.equal(after.code, 0, after.err);
    assert.match(after.out, new RegExp(`kiln: ${KILN} mcp --run-dir ${runDir} --record ` +
                                       `${runDir}/sessions/ - . Connected`));
    const sessions = fs.readdirSync(path.join(runDir, 'sessions'));
    assert.equal(sessions.length, 1);
    const lines = fs.readFileSync(path.join(runDir, 'sessions', sessions[0]), 'utf8').trim()
      .split('\n').map((line) => JSON.parse(line));
    // Claude Code probes with the 2026-07-28 revision's server/discover first: kiln answers it
    // with a result (no -32601 fallback to initialize), so the session runs stateless.
    const discover = lines.find((l) => l.dir === 'in' && l.message.method === 'server/discover');
    assert.ok(discover, 'the recording holds the client\'s server/discover');
    const answer = lines.find((l) => l.dir === 'out' && l.message.id === discover.message.id &&
                                     (l.message.result || l.message.error));
    assert.ok(answer && answer.message.result, 'server/discover got a result: ' +
              JSON.stringify(answer && answer.message));
    assert.ok(answer.message.result.supportedVersions.includes('2026-07-28'),
              JSON.stringify(answer.message.result));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('codex reads the run\'s config.toml: kiln on this run with a 1800 s tool timeout', () => {
  assert.ok(KILN, 'KILN_BIN must name the kiln binary');
  const { dir, run: runDir } = setupRun();
  const env = { ...process.env, CODEX_HOME: path.join(runDir, '.codex'), HOME: dir };
  try {
    const list = run([client('codex'), 'mcp', 'list'], { cwd: path.join(runDir, 'worktree'), env });
    assert.equal(list.code, 0, list.err);
    assert.match(list.out, /kiln\s+\S*kiln\s+mcp --run-dir \S+ --record \S+sessions\/\s+-\s+-\s+enabled/);
    const get = run([client('codex'), 'mcp', 'get', 'kiln'], { cwd: path.join(runDir, 'worktree'), env });
    assert.equal(get.code, 0, get.err);
    assert.match(get.out, new RegExp(`command: ${KILN}`));
    assert.match(get.out, new RegExp(`args: mcp --run-dir ${runDir} --record ${runDir}/sessions/`));
    assert.match(get.out, /tool_timeout_sec: 1800/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
