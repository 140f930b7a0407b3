// Agent layers with the real Docker engine and the real npm registry (the build alone has the
// network): every built-in agent is installed on a small task image (Debian, git, no Node)
// and answers its version command in the sandbox, offline, as the task's uid; Claude Code,
// pointed at a port where nothing listens, fails by itself within its deadline; a package
// that cannot be installed is refused in one line. Layers are found again by their labels, so
// a second run of this file builds nothing.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  builtinAgent,
  createAgentLayers,
  loadAgentDefinition,
  parseAgentDefinition,
  runAgent,
  startAgentSandbox,
  type AgentDefinition,
  type AgentLayers,
} from '../../src/agents/index.js';
import { npmBuildSettings } from '../../src/config.js';
import { ProctorError } from '../../src/errors.js';
import { removeContainer } from '../../src/sandbox/container.js';
import { LABEL } from '../../src/sandbox/labels.js';
import {
  dockerScope,
  execFileAsync,
  fixtureImage,
  readFromImage,
  testDocker,
} from '../helpers/docker.js';
import { onCleanup, tempDir } from '../helpers/temp.js';

const docker = testDocker();
const scope = dockerScope(docker, 'agents-layer');
const UID = 1000;

let base: string;
let baseCommit: string;
let layers: AgentLayers;

beforeAll(async () => {
  base = await fixtureImage('git-history');
  baseCommit = await readFromImage(base, '/base_commit');
  layers = createAgentLayers(docker, { uid: UID, gid: UID, ...npmBuildSettings() });
}, 300_000);

/** Builds (or finds) the layer, starts its sandbox, runs `fn` in it, removes it. */
async function inSandbox<T>(
  definition: AgentDefinition,
  fn: (id: string) => Promise<T>,
): Promise<T> {
  const layer = await layers.resolve(base, definition);
  const started = await startAgentSandbox(docker, {
    owner: scope.owner(),
    image: layer.image,
    repoPath: '/repo',
    baseCommit,
    uid: UID,
    gid: UID,
    limits: { cpus: 1, memoryMb: 2048, pids: 256 },
  });
  try {
    return await fn(started.container.id);
  } finally {
    await removeContainer(started.container);
  }
}

const runIn = (id: string, definition: AgentDefinition, more: Record<string, unknown> = {}) =>
  runAgent(docker, id, {
    definition,
    prompt: 'Change "one" to "1" in a.txt.',
    baseUrl: 'http://127.0.0.1:9',
    token: 'proctor-run-token',
    model: 'test-model',
    workdir: '/repo',
    uid: UID,
    gid: UID,
    timeoutMs: 60_000,
    ...more,
  });

/** A loopback port where nothing listens (taken, then given back). */
async function deadPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

describe('the built-in agents', () => {
  const versions: Record<string, RegExp> = {
    'claude-code': /^2\.1\.332 \(Claude Code\)$/,
    'gemini-cli': /^0\.61\.0$/,
    'qwen-code': /^0\.24\.4$/,
    opencode: /^1\.18\.33$/,
    codex: /^codex-cli 0\.171\.0$/,
  };
  for (const [name, version] of Object.entries(versions)) {
    it(`installs ${name} into a layer and runs its version command offline as the task uid`, async () => {
      const definition = builtinAgent(name);
      const result = await inSandbox(definition, (id) =>
        runIn(id, definition, { versionOnly: true }),
      );
      expect(result.outcome, result.stderr).toEqual({ kind: 'completed' });
      expect(result.stdout.trim()).toMatch(version);
    }, 900_000);
  }

  // Each is told to give up at once (retrying belongs to the proxy): no model, a clean crash.
  // Not Qwen Code: it crashed within 10 s in two runs and retried to a 90 s deadline in a third.
  const unreachable: Record<string, RegExp> = {
    'claude-code': /API Error: Connection refused/,
    'gemini-cli': /API Error: exception TypeError: fetch failed/,
    codex: /"turn\.failed","error":\{"message":"Connection failed/,
  };
  for (const [name, says] of Object.entries(unreachable)) {
    it(`ends ${name} headless against a port where nothing listens as crashed, within its deadline`, async () => {
      const definition = builtinAgent(name);
      const port = await deadPort();
      const result = await inSandbox(definition, (id) =>
        runIn(id, definition, { baseUrl: `http://127.0.0.1:${port}`, timeoutMs: 90_000 }),
      );
      expect(result.outcome).toEqual({ kind: 'crashed', exitCode: 1, oomKilled: false });
      expect(result.durationMs).toBeLessThan(90_000);
      expect(`${result.stdout}${result.stderr}`).toMatch(says);
      if (name === 'claude-code') {
        // Its session log, from its HOME, is read back.
        expect(result.logs.length).toBe(1);
        expect(result.logs[0]?.path).toMatch(
          /^\/proctor-home\/\.claude\/projects\/-repo\/.+\.jsonl$/,
        );
        expect(result.logs[0]?.text).toContain('"type":"user"');
      }
    }, 900_000);
  }
});

describe('agent layers', () => {
  /** A packed package whose executable is a Node script, and its definition, in a temp dir. */
  function helloAgent(node: string, engines?: string): AgentDefinition {
    const dir = tempDir();
    const pkg = join(dir, 'pkg');
    mkdirSync(join(pkg, 'bin'), { recursive: true });
    writeFileSync(
      join(pkg, 'package.json'),
      JSON.stringify({
        name: 'hello-agent',
        version: '1.0.0',
        bin: { 'hello-agent': 'bin/hello.js' },
        ...(engines === undefined ? {} : { engines: { node: engines } }),
      }),
    );
    writeFileSync(
      join(pkg, 'bin', 'hello.js'),
      '#!/usr/bin/env node\nconsole.log(`hello from node ${process.versions.node.split(".")[0]}`);\n',
    );
    execFileSync('npm', ['pack', '--pack-destination', dir], { cwd: pkg, stdio: 'ignore' });
    writeFileSync(
      join(dir, 'hello.toml'),
      [
        'name = "hello"',
        'protocol = "openai-chat"',
        'prompt = "stdin"',
        'command = ["hello-agent"]',
        '[install]',
        'tarball = "hello-agent-1.0.0.tgz"',
        `node = "${node}"`,
      ].join('\n'),
    );
    return loadAgentDefinition(join(dir, 'hello.toml'));
  }

  it('installs a tarball whose executable is a Node script, run by the layer’s own Node in an image without one', async () => {
    const definition = helloAgent('host');
    const result = await inSandbox(definition, async (id) => {
      // The task image has no node of its own.
      const bare = await runIn(
        id,
        parseAgentDefinition(
          'name = "hello"\nprotocol = "openai-chat"\nprompt = "stdin"\ncommand = ["sh", "-c", "command -v node || echo none"]\n[install]\ntarball = "/x.tgz"',
          'bare.toml',
        ),
      );
      expect(bare.stdout).toBe('none\n');
      return runIn(id, definition);
    });
    expect(result.outcome).toEqual({ kind: 'completed' });
    expect(result.stdout).toBe(`hello from node ${process.versions.node.split('.')[0]}\n`);
  }, 900_000);

  it("does not carry the task image's context labels, so no later home takes the layer for the task image", async () => {
    // A task image as the image cache builds it: labelled with its context's hash.
    const context = tempDir();
    writeFileSync(join(context, 'Dockerfile'), `FROM ${base}\n`);
    const hash = 'f'.repeat(64);
    await execFileAsync('docker', [
      'build',
      '-q',
      '--label',
      `${LABEL.context}=${hash}`,
      '--label',
      `${LABEL.dockerfile}=Dockerfile`,
      '-t',
      `proctor-test-labelled:${'f'.repeat(12)}`,
      context,
    ]);
    const tag = `proctor-test-labelled:${hash.slice(0, 12)}`;
    const task = (await docker.getImage(tag).inspect()).Id;
    const layer = await layers.resolve(task, helloAgent('host'));
    onCleanup(async () => {
      await execFileAsync('docker', ['rmi', '-f', layer.image, tag]).catch(() => undefined);
    });
    const labels = (await docker.getImage(layer.image).inspect()).Config.Labels ?? {};
    expect(labels[LABEL.agent]).toBe('hello');
    expect(labels[LABEL.context] ?? '').toBe('');
    expect(labels[LABEL.dockerfile] ?? '').toBe('');
    const claimed = await docker.listImages({ filters: { label: [`${LABEL.context}=${hash}`] } });
    expect(claimed.map((i) => i.Id)).toEqual([task]);
  }, 900_000);

  it('installs the Node version a definition asks for from npm, and runs the agent on it', async () => {
    const definition = helloAgent('22.23.5', '>=22');
    const result = await inSandbox(definition, (id) => runIn(id, definition));
    expect(result.outcome).toEqual({ kind: 'completed' });
    expect(result.stdout).toBe('hello from node 22\n');
  }, 900_000);

  it('refuses in one line a package whose engines the Node it would run on does not meet', async () => {
    const definition = helloAgent('host', '>=99');
    const error = await layers.resolve(base, definition).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((error as ProctorError).code).toBe('IMAGE_INVALID');
    expect((error as ProctorError).message).toMatch(
      /^agent hello: npm could not install \/opt\/proctor\/agents\/hello\/hello-agent-1\.0\.0\.tgz: .*engine/i,
    );
    expect((error as ProctorError).message).not.toContain('\n');
  }, 900_000);

  it('refuses a package that cannot be installed in one line', async () => {
    const definition = parseAgentDefinition(
      [
        'name = "missing"',
        'protocol = "openai-chat"',
        'prompt = "stdin"',
        'command = ["missing"]',
        '[install]',
        'npm = "@proctor-test-nonexistent/no-such-agent@1.0.0"',
      ].join('\n'),
      'missing.toml',
    );
    const error = await layers.resolve(base, definition).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ProctorError);
    expect((error as ProctorError).code).toBe('IMAGE_INVALID');
    expect((error as ProctorError).message).toMatch(
      /^agent missing: npm could not install @proctor-test-nonexistent\/no-such-agent@1\.0\.0: .*404/,
    );
    expect((error as ProctorError).message).not.toContain('\n');
  }, 900_000);
});
