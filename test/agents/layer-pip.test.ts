// Agent layers installed from PyPI (install.pip), with the real Docker engine and the real
// index (the build alone has the network): a small pinned package on a task image with its own,
// older Python (Debian bullseye: 3.9, glibc 2.31) runs offline in the sandbox as the task's uid
// on the layer's Python, while the task's python, its prefix and its site-packages are byte for
// byte what they were; a pin the index does not have is refused in one line.
import { execFileSync } from 'node:child_process';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  builtinAgent,
  createAgentLayers,
  parseAgentDefinition,
  runAgent,
  startAgentSandbox,
  type AgentDefinition,
  type AgentLayers,
} from '../../src/agents/index.js';
import { npmBuildSettings } from '../../src/config.js';
import { ProctorError } from '../../src/errors.js';
import { removeContainer } from '../../src/sandbox/container.js';
import { dockerScope, fixtureImage, readFromImage, testDocker } from '../helpers/docker.js';

const docker = testDocker();
const scope = dockerScope(docker, 'agents-layer-pip');
const UID = 1000;

let base: string;
let baseCommit: string;
let layers: AgentLayers;

beforeAll(async () => {
  execFileSync('bash', ['docker/base-image.sh', 'bullseye'], { stdio: 'ignore' });
  base = await fixtureImage('python-bullseye');
  baseCommit = await readFromImage(base, '/base_commit');
  layers = createAgentLayers(docker, { uid: UID, gid: UID, ...npmBuildSettings() });
}, 300_000);

const cowsay = (pin: string): AgentDefinition =>
  parseAgentDefinition(
    [
      'name = "cowsay"',
      'protocol = "openai-chat"',
      'prompt = "argument"',
      'command = ["cowsay", "-t", "{{prompt}}"]',
      'version_command = ["cowsay", "--version"]',
      '[install]',
      `pip = "${pin}"`,
    ].join('\n'),
    'cowsay.toml',
  );

/** What an image's python3 is: its path, prefix, version and a digest of every site-packages file. */
const PYTHON_SHOWN = [
  'command -v python3',
  "python3 -c 'import sys, site; print(sys.prefix, sys.version_info[:2], site.getsitepackages())'",
  'python3 -c \'import site; print("\\n".join(site.getsitepackages()))\' | while read -r d; do [ -d "$d" ] && find "$d" -type f -exec sha256sum {} +; done | sort | sha256sum',
  'ls /usr/lib/python3/dist-packages | sort | sha256sum',
].join('; ');

function pythonOf(image: string): string {
  return execFileSync(
    'docker',
    ['run', '--rm', '--network', 'none', '--entrypoint', 'sh', image, '-c', PYTHON_SHOWN],
    { encoding: 'utf8' },
  );
}

/** Builds (or finds) the layer, runs the definition's version command in its sandbox offline. */
async function versionOf(definition: AgentDefinition) {
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
    return await runAgent(docker, started.container.id, {
      definition,
      prompt: '',
      baseUrl: 'http://127.0.0.1:9',
      token: 'proctor-run-token',
      model: 'test-model',
      workdir: '/repo',
      uid: UID,
      gid: UID,
      timeoutMs: 120_000,
      versionOnly: true,
    });
  } finally {
    await removeContainer(started.container);
  }
}

describe('agent layers from PyPI', () => {
  it('installs a pinned package on a Python of the layer’s own and runs it offline, leaving the task’s Python as it was', async () => {
    const definition = cowsay('cowsay==6.1');
    const layer = await layers.resolve(base, definition);
    // The task's python3 is the image's own, with the same prefix and site-packages, in both.
    const before = pythonOf(base);
    expect(before).toMatch(/^\/usr\/bin\/python3\n\/usr \(3, 9\) /);
    expect(pythonOf(layer.image)).toBe(before);

    const started = await startAgentSandbox(docker, {
      owner: scope.owner(),
      image: layer.image,
      repoPath: '/repo',
      baseCommit,
      uid: UID,
      gid: UID,
      limits: { cpus: 1, memoryMb: 1024, pids: 128 },
    });
    try {
      const run = (more: Record<string, unknown>) =>
        runAgent(docker, started.container.id, {
          definition,
          prompt: 'moo from the layer',
          baseUrl: 'http://127.0.0.1:9',
          token: 'proctor-run-token',
          model: 'test-model',
          workdir: '/repo',
          uid: UID,
          gid: UID,
          timeoutMs: 60_000,
          ...more,
        });
      const version = await run({ versionOnly: true });
      expect(version.outcome, version.stderr).toEqual({ kind: 'completed' });
      expect(version.stdout.trim()).toBe('6.1');
      const said = await run({});
      expect(said.outcome, said.stderr).toEqual({ kind: 'completed' });
      expect(said.stdout).toContain('moo from the layer');
      // On the agent's PATH: the package's own script, no python or pip of the layer's.
      const listing = execFileSync(
        'docker',
        [
          'run',
          '--rm',
          '--network',
          'none',
          '--entrypoint',
          'sh',
          layer.image,
          '-c',
          'ls /opt/proctor/agents/cowsay/bin; /opt/proctor/agents/cowsay/python -c "import sys; print(sys.version_info[:2], sys.prefix)"',
        ],
        { encoding: 'utf8' },
      );
      expect(listing).toBe('cowsay\n(3, 11) /opt/proctor/agents/cowsay/venv\n');
    } finally {
      await removeContainer(started.container);
    }
  }, 1_800_000);

  it('refuses a pin the index does not have in one line', async () => {
    const error = await layers.resolve(base, cowsay('cowsay==0.0.99')).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ProctorError);
    expect((error as ProctorError).code).toBe('IMAGE_INVALID');
    expect((error as ProctorError).message).toMatch(
      /^agent cowsay: pip could not install cowsay==0\.0\.99: .*(No matching distribution|Could not find a version)/,
    );
    expect((error as ProctorError).message).not.toContain('\n');
  }, 1_800_000);

  // The built-ins on the bullseye image too: their compiled dependencies (numpy, tokenizers,
  // tree-sitter, …) load through the layer's loader on a glibc older than the one they need.
  const versions: Record<string, RegExp> = {
    'mini-swe-agent': /This is mini-swe-agent version 2\.4\.6\.[\s\S]*Usage: mini /,
    aider: /^aider 0\.86\.2$/m,
  };
  for (const [name, version] of Object.entries(versions)) {
    it(`installs ${name} on a task image with an older glibc and runs its version command offline`, async () => {
      const result = await versionOf(builtinAgent(name));
      expect(result.outcome, result.stderr).toEqual({ kind: 'completed' });
      expect(`${result.stdout}${result.stderr}`).toMatch(version);
    }, 1_800_000);
  }
});
