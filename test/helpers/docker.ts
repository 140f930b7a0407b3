// The real Docker engine for tests: a client that fails loudly when no engine answers,
// fixture images built once (and cached by the engine), and label-based cleanup so that no
// test leaves a container or volume behind.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createDockerClient, type DockerClient } from '../../src/sandbox/docker.js';
import { removeOwned } from '../../src/sandbox/cleanup.js';
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
