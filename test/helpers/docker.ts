// The real Docker engine for tests: a client that fails loudly when no engine answers,
// fixture images built once (and cached by the engine), and label-based cleanup so that no
// test leaves a container or volume behind.
import { execFile, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createDockerClient, type DockerClient } from '../../src/sandbox/docker.js';
import { removeOwned } from '../../src/sandbox/cleanup.js';
import { createWorkspace } from '../../src/sandbox/workspace.js';
import type { Owner } from '../../src/sandbox/labels.js';
import { ROOT } from './processes.js';
import { onCleanup } from './temp.js';

const run = promisify(execFile);

export function testDocker(): DockerClient {
  return createDockerClient(process.env['DOCKER_HOST']);
}

/** A fresh owner for one test; everything it labels is removed after the test. */
export function testOwner(docker: DockerClient, prefix = 'test'): Owner {
  const owner = {
    job: `${prefix}-${randomBytes(4).toString('hex')}`,
    attempt: 1,
    home: '/proctor-tests',
  };
  onCleanup(async () => {
    await removeOwned(docker, owner);
  });
  return owner;
}

const built = new Map<string, Promise<string>>();

/** Builds test/fixtures/images/<name> as proctor-test-<name>; returns its image id. */
export function fixtureImage(name: string): Promise<string> {
  let pending = built.get(name);
  if (!pending) {
    pending = (async () => {
      const tag = `proctor-test-${name}:latest`;
      await run(
        'docker',
        ['build', '-q', '--network', 'host', '-t', tag, join(ROOT, 'test/fixtures/images', name)],
        {
          maxBuffer: 16 * 1024 * 1024,
        },
      );
      const { stdout } = await run('docker', ['image', 'inspect', '--format', '{{.Id}}', tag]);
      return stdout.trim();
    })();
    built.set(name, pending);
  }
  return pending;
}

/** Reads a file from an image (fixture metadata such as /base_commit). */
export async function readFromImage(image: string, path: string): Promise<string> {
  const { stdout } = await run('docker', ['run', '--rm', '--network', 'none', image, 'cat', path]);
  return stdout.trim();
}

export { run as execFileAsync };

/** True when gVisor's runsc is installed (.ci/run installs it). */
export const hasRunsc = (() => {
  try {
    execFileSync('sh', ['-c', 'command -v runsc'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

/**
 * The git-history fixture checked out into a fresh solver workspace for one test: its image,
 * base commit, owner (cleaned up after the test) and volume.
 */
export async function fixtureWorkspace(
  docker: DockerClient,
  prefix: string,
  options: { runtime?: string } = {},
) {
  const image = await fixtureImage('git-history');
  const base = await readFromImage(image, '/base_commit');
  const owner = testOwner(docker, prefix);
  const volume = await createWorkspace(docker, {
    owner,
    role: 'solver',
    image,
    repoPath: '/repo',
    baseCommit: base,
    uid: 1000,
    gid: 1000,
    ...options,
  });
  return { image, base, owner, volume };
}
