// Agents in the sandbox, with the real Docker engine: a layer installed from a host binary on a
// small task image, run in the solver's isolation profile, ending with the right class when
// it completes, crashes, hangs or floods its output. One layer serves the whole file: the
// definitions differ only in how the agent is started, which is not part of the layer.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AGENT_HOME,
  PROMPT_FILE,
  createAgentLayers,
  parseAgentDefinition,
  removeAgentLayers,
  runAgent,
  startAgentSandbox,
  type AgentDefinition,
  type AgentLayers,
} from '../../src/agents/index.js';
import { npmBuildSettings } from '../../src/config.js';
import { LABEL } from '../../src/sandbox/labels.js';
import { removeContainer } from '../../src/sandbox/container.js';
import { dockerScope, fixtureImage, readFromImage, testDocker } from '../helpers/docker.js';

const docker = testDocker();
const scope = dockerScope(docker, 'agents-run');
const UID = 1000;

// The agent: what it does is its first argument. `probe` records what the sandbox looks like
// from inside; the others misbehave.
const FAKE_AGENT = `#!/bin/sh
mode=$1; shift
case $mode in
  probe)
    { id -u; id -g; } > probe-ids.txt
    if touch /opt/proctor/probe 2>/dev/null; then echo writable; else echo read-only; fi > probe-root.txt
    ls /sys/class/net > probe-net.txt
    printf '%s|%s|%s\\n' "$HOME" "$MY_BASE_URL" "$MY_API_KEY" > probe-env.txt
    cat "$HOME/.fake/config.json" > probe-settings.txt
    mkdir -p "$HOME/.fake/logs" && echo "session started" > "$HOME/.fake/logs/session.log"
    case $1 in
      stdin) cat > seen-prompt.txt ;;
      file) cat "$2" > seen-prompt.txt ;;
      *) printf '%s' "$2" > seen-prompt.txt ;;
    esac
    echo done ;;
  crash) echo "fatal: no model" >&2; exit 3 ;;
  hang) sleep 1000 ;;
  flood) yes "flood flood flood flood" ;;
esac
`;

let base: string;
let baseCommit: string;
let layers: AgentLayers;
let agentFile: string;

/** A definition of the fake agent, started as `command`, taking its prompt as `prompt`. */
function fake(command: string[], prompt = 'stdin'): AgentDefinition {
  const text = `
name = "fake"
protocol = "openai-chat"
prompt = "${prompt}"
command = ${JSON.stringify(command)}
logs = ["{{home}}/.fake/logs", "{{home}}/.fake/missing.log"]
[install]
binary = ${JSON.stringify(agentFile)}
[env]
MY_BASE_URL = "{{base_url}}/v1"
MY_API_KEY = "{{token}}"
[[files]]
path = ".fake/config.json"
content = '{"url": "{{base_url}}", "model": "{{model}}", "telemetry": false}'
`;
  return parseAgentDefinition(text, 'fake.toml');
}

/** The fake's layer (built once for the file), and a started sandbox on it for one test. */
async function sandbox(definition: AgentDefinition) {
  const layer = await layers.resolve(base, definition);
  const owner = scope.owner();
  const started = await startAgentSandbox(docker, {
    owner,
    image: layer.image,
    repoPath: '/repo',
    baseCommit,
    uid: UID,
    gid: UID,
    limits: { cpus: 1, memoryMb: 512, pids: 128 },
  });
  return { layer, id: started.container.id, remove: () => removeContainer(started.container) };
}

const run = (
  id: string,
  definition: AgentDefinition,
  more: Partial<Parameters<typeof runAgent>[2]> = {},
) =>
  runAgent(docker, id, {
    definition,
    prompt: 'Fix the bug in a.txt; it says "one".',
    baseUrl: 'http://127.0.0.1:4000',
    token: 'proctor-run-token',
    model: 'test-model',
    workdir: '/repo',
    uid: UID,
    gid: UID,
    timeoutMs: 60_000,
    ...more,
  });

/** A file of the work tree, read in the running container. */
async function readInside(id: string, path: string): Promise<string> {
  const { execInContainer } = await import('../../src/sandbox/exec.js');
  const result = await execInContainer(docker, id, {
    cmd: ['cat', path],
    user: `${UID}:${UID}`,
    timeoutMs: 10_000,
    outputBytes: 64 * 1024,
  });
  return result.stdout;
}

beforeAll(async () => {
  base = await fixtureImage('git-history');
  baseCommit = await readFromImage(base, '/base_commit');
  // Not tempDir: that goes after the first test, and every test's definition reads the file.
  const dir = mkdtempSync(join(tmpdir(), 'proctor-agent-bin-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  agentFile = join(dir, 'fake-agent');
  writeFileSync(agentFile, FAKE_AGENT, { mode: 0o755 });
  layers = createAgentLayers(docker, { uid: UID, gid: UID, ...npmBuildSettings() });
}, 300_000);

describe('an agent in the sandbox', () => {
  it('runs as the task uid on a read-only root without network, its HOME set up from the definition', async () => {
    const definition = fake(['fake-agent', 'probe', 'argument', '{{prompt}}'], 'argument');
    const box = await sandbox(definition);
    try {
      const result = await run(box.id, definition);
      expect(result.outcome).toEqual({ kind: 'completed' });
      expect(result.stdout).toBe('done\n');
      expect(await readInside(box.id, '/repo/probe-ids.txt')).toBe(`${UID}\n${UID}\n`);
      expect(await readInside(box.id, '/repo/probe-root.txt')).toBe('read-only\n');
      expect((await readInside(box.id, '/repo/probe-net.txt')).trim()).toBe('lo');
      expect(await readInside(box.id, '/repo/probe-env.txt')).toBe(
        `${AGENT_HOME}|http://127.0.0.1:4000/v1|proctor-run-token\n`,
      );
      expect(await readInside(box.id, '/repo/probe-settings.txt')).toBe(
        '{"url": "http://127.0.0.1:4000", "model": "test-model", "telemetry": false}',
      );
      expect(await readInside(box.id, '/repo/seen-prompt.txt')).toBe(
        'Fix the bug in a.txt; it says "one".',
      );
      // Its log is read back; a log path that does not exist is no error.
      expect(result.logs).toEqual([
        {
          path: `${AGENT_HOME}/.fake/logs/session.log`,
          bytes: 16,
          text: 'session started\n',
          truncated: false,
        },
      ]);
    } finally {
      await box.remove();
    }
  }, 300_000);

  it('hands the prompt over on stdin or as a file, as the definition says', async () => {
    const stdin = fake(['fake-agent', 'probe', 'stdin'], 'stdin');
    const file = fake(['fake-agent', 'probe', 'file', '{{prompt_file}}'], 'file');
    const box = await sandbox(stdin);
    try {
      expect((await run(box.id, stdin, { prompt: 'from stdin' })).outcome.kind).toBe('completed');
      expect(await readInside(box.id, '/repo/seen-prompt.txt')).toBe('from stdin');
      expect((await run(box.id, file, { prompt: 'from a file' })).outcome.kind).toBe('completed');
      expect(await readInside(box.id, '/repo/seen-prompt.txt')).toBe('from a file');
      expect(await readInside(box.id, PROMPT_FILE)).toBe('from a file');
    } finally {
      await box.remove();
    }
  }, 300_000);

  it('ends a crashing agent as crashed with its exit code', async () => {
    const definition = fake(['fake-agent', 'crash']);
    const box = await sandbox(definition);
    try {
      const result = await run(box.id, definition);
      expect(result.outcome).toEqual({ kind: 'crashed', exitCode: 3, oomKilled: false });
      expect(result.stderr).toBe('fatal: no model\n');
    } finally {
      await box.remove();
    }
  }, 300_000);

  it('ends a hung agent at its deadline as timed out', async () => {
    const definition = fake(['fake-agent', 'hang']);
    const box = await sandbox(definition);
    try {
      const result = await run(box.id, definition, { timeoutMs: 2_000 });
      expect(result.outcome).toEqual({ kind: 'timed_out' });
      expect(result.durationMs).toBeGreaterThanOrEqual(2_000);
      expect(result.durationMs).toBeLessThan(15_000);
    } finally {
      await box.remove();
    }
  }, 300_000);

  it('kills an agent that floods its output, keeping only the bounded head and tail', async () => {
    const definition = fake(['fake-agent', 'flood']);
    const box = await sandbox(definition);
    try {
      const floodBytes = 4 * 1024 * 1024;
      const result = await run(box.id, definition, { floodBytes, outputBytes: 64 * 1024 });
      expect(result.outcome.kind).toBe('output_flood');
      if (result.outcome.kind === 'output_flood') {
        expect(result.outcome.bytes).toBeGreaterThan(floodBytes);
      }
      expect(result.truncated).toBe(true);
      expect(result.stdout.length).toBeLessThanOrEqual(70 * 1024);
      expect(result.durationMs).toBeLessThan(30_000);
    } finally {
      await box.remove();
    }
  }, 300_000);

  it('reuses the layer: labelled with its base and digest, found again without a build', async () => {
    const definition = fake(['fake-agent', 'crash']);
    const first = await layers.resolve(base, definition);
    const info = await docker.getImage(first.image).inspect();
    expect(info.Config.Labels).toMatchObject({
      [LABEL.agent]: 'fake',
      [LABEL.agentBase]: base,
      [LABEL.agentDigest]: first.digest,
      'proctor.build': '1',
    });
    // Another process (a fresh cache) finds it on the engine.
    const again = await createAgentLayers(docker, { uid: UID, gid: UID }).resolve(base, definition);
    expect(again).toMatchObject({ image: first.image, built: false });
  }, 300_000);
  it('removes the layers of one agent on a task image, keeping one a container uses, and builds again on next use', async () => {
    const definition = fake(['fake-agent', 'crash']);
    const box = await sandbox(definition);
    // In use: kept.
    expect(await removeAgentLayers(docker, { base, agent: 'fake' })).toEqual([]);
    await box.remove();
    // Another agent's name, or another base: nothing of this one goes.
    expect(await removeAgentLayers(docker, { base, agent: 'not-fake' })).toEqual([]);
    expect(
      await removeAgentLayers(docker, { base: `sha256:${'0'.repeat(64)}`, agent: 'fake' }),
    ).toEqual([]);
    expect(await removeAgentLayers(docker, { base, agent: 'fake' })).toEqual([box.layer.image]);
    const fresh = createAgentLayers(docker, { uid: UID, gid: UID, ...npmBuildSettings() });
    const again = await fresh.resolve(base, definition);
    expect(again.built).toBe(true);
  }, 300_000);
});
