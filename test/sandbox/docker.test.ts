import { describe, expect, it } from 'vitest';
import { isProctorError } from '../../src/errors.js';
import { createDockerClient, requireDocker } from '../../src/sandbox/docker.js';

describe('docker client', () => {
  it('honours a unix:// DOCKER_HOST', async () => {
    await expect(
      requireDocker(createDockerClient('unix:///var/run/docker.sock')),
    ).resolves.toBeUndefined();
  });

  it('reports an engine that does not answer as DOCKER_UNAVAILABLE, in one line', async () => {
    const error = await requireDocker(
      createDockerClient('tcp://127.0.0.1:1'),
      'tcp://127.0.0.1:1',
    ).catch((e: unknown) => e);
    expect(isProctorError(error, 'DOCKER_UNAVAILABLE')).toBe(true);
    expect((error as Error).message).toMatch(
      /^no Docker engine answers at tcp:\/\/127\.0\.0\.1:1: .*\(run npm run setup\)$/,
    );
    const missing = await requireDocker(createDockerClient('unix:///nonexistent.sock')).catch(
      (e: unknown) => e,
    );
    expect(isProctorError(missing, 'DOCKER_UNAVAILABLE')).toBe(true);
  });

  it('refuses a DOCKER_HOST scheme it cannot use', () => {
    expect(() => createDockerClient('ssh://user@host')).toThrow(
      'DOCKER_HOST=ssh://user@host: unsupported scheme ssh:',
    );
  });
});
