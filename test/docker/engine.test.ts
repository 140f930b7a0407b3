// The machine set-up that .ci/run and the README rely on: a Docker engine answers, the
// set-up scripts are idempotent (and quick once done), and the base image runs a container
// under the flags Proctor's isolation profile uses. A missing engine fails here, loudly.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/processes.js';

const run = promisify(execFile);

describe('docker set-up', () => {
  it('finds a running engine and the base image, and changes nothing on a second run', async () => {
    for (const script of ['docker/setup-engine.sh', 'docker/base-image.sh']) {
      const started = Date.now();
      const { stderr } = await run('bash', [script], { cwd: ROOT });
      expect(stderr, `${script} should have nothing to do`).toBe('');
      expect(Date.now() - started).toBeLessThan(15_000);
    }
  });

  it('runs the base image with no network, a read-only root and no capabilities', async () => {
    const { stdout } = await run('docker', [
      'run',
      '--rm',
      '--network',
      'none',
      '--read-only',
      '--cap-drop',
      'ALL',
      '--security-opt',
      'no-new-privileges',
      '--user',
      '1000:1000',
      '--label',
      'proctor.job=engine-test',
      'debian:bookworm-slim',
      'sh',
      '-c',
      'id -u; cat /etc/debian_version; touch /x 2>/dev/null || echo read-only',
    ]);
    const [uid, version, readOnly] = stdout.trim().split('\n');
    expect(uid).toBe('1000');
    expect(version).toMatch(/^12\./);
    expect(readOnly).toBe('read-only');
  });
});

describe('gVisor (.ci/test-tools installs and registers runsc)', () => {
  it('is registered with the engine and runs a networkless container under its own kernel', async () => {
    const { stdout: runtimes } = await run('docker', ['info', '--format', '{{json .Runtimes}}']);
    expect(Object.keys(JSON.parse(runtimes) as object)).toContain('runsc');
    const { stdout } = await run('docker', [
      'run',
      '--rm',
      '--runtime',
      'runsc',
      '--network',
      'none',
      '--label',
      'proctor.job=engine-test',
      'debian:bookworm-slim',
      'uname',
      '-r',
    ]);
    // gVisor's Sentry reports its own kernel version, not the host's.
    const { stdout: host } = await run('uname', ['-r']);
    expect(stdout.trim()).not.toBe(host.trim());
  });
});
