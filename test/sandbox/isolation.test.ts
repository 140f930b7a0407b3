// Adversarial checks of the isolation profile on real containers: no network, a read-only
// root, no privilege from setuid binaries, and gVisor when it is installed.
import { execFileSync } from 'node:child_process';
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { runToCompletion } from '../../src/sandbox/run.js';
import type { SandboxSpec } from '../../src/sandbox/profile.js';
import { fixtureImage, fixtureWorkspace, testDocker, testOwner } from '../helpers/docker.js';
import { onCleanup } from '../helpers/temp.js';

const docker = testDocker();

async function probe(image: string, script: string, extra: Partial<SandboxSpec> = {}) {
  const owner = testOwner(docker, 'iso');
  return runToCompletion(
    docker,
    {
      owner,
      role: 'evaluator',
      image,
      cmd: ['bash', '-c', script],
      uid: 1000,
      gid: 1000,
      workdir: '/tmp',
      ...extra,
    },
    { timeoutMs: 60_000 },
  );
}

describe('isolation', () => {
  it('has no network: only loopback, no route, and the host loopback is out of reach', async () => {
    const server = createServer((socket) => socket.end('reached'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    onCleanup(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const port = (server.address() as { port: number }).port;
    const image = await fixtureImage('setuid');
    const result = await probe(
      image,
      `ls /sys/class/net; tail -n +2 /proc/net/route | wc -l; (exec 3<>/dev/tcp/127.0.0.1/${port} && echo CONNECTED) 2>/dev/null || echo refused`,
    );
    expect(result.stdout.trim().split('\n')).toEqual(['lo', '0', 'refused']);
  });

  it('resolves localhost to loopback, as `docker run --network none` does, and the sandbox user cannot change it', async () => {
    const image = await fixtureImage('setuid');
    const result = await probe(
      image,
      '(getent hosts localhost >/dev/null && echo resolves) || echo unresolved; grep -c "^127.0.0.1[[:space:]]*localhost" /etc/hosts; (echo "1.2.3.4 evil" >> /etc/hosts) 2>/dev/null && echo WROTE || echo denied; ls /sys/class/net',
    );
    expect(result.stdout.trim().split('\n')).toEqual(['resolves', '1', 'denied', 'lo']);
  });

  it('refuses writes to the root filesystem, and allows them on its tmpfs', async () => {
    const image = await fixtureImage('setuid');
    const result = await probe(
      image,
      'for p in /x /usr/x /etc/x; do touch $p 2>/dev/null && echo WROTE $p || echo denied; done; touch /tmp/ok && echo tmp-ok',
    );
    expect(result.stdout.trim().split('\n')).toEqual(['denied', 'denied', 'denied', 'tmp-ok']);
  });

  it('gains no privilege from a setuid-root binary, and holds no capability', async () => {
    const image = await fixtureImage('setuid');
    const result = await probe(
      image,
      "/usr/local/bin/suid-id; grep -E '^(CapEff|CapPrm|NoNewPrivs)' /proc/self/status",
    );
    const lines = result.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^uid=1000 gid=1000/);
    expect(lines[0]).not.toContain('euid=0');
    expect(lines.slice(1)).toEqual([
      'CapPrm:\t0000000000000000',
      'CapEff:\t0000000000000000',
      'NoNewPrivs:\t1',
    ]);
  });
});

describe('the runsc runtime (gVisor; .ci/test-tools installs and registers it)', () => {
  it('initialises a workspace and runs the profile under gVisor', async () => {
    const { image, base, owner, volume } = await fixtureWorkspace(docker, 'runsc', {
      runtime: 'runsc',
    });
    const result = await runToCompletion(
      docker,
      {
        owner,
        role: 'solver',
        image,
        runtime: 'runsc',
        cmd: [
          'sh',
          '-c',
          'uname -r; git -c safe.directory=* rev-parse HEAD; ls /sys/class/net 2>/dev/null | tr "\\n" " "',
        ],
        uid: 1000,
        gid: 1000,
        workdir: '/workspace',
        workspace: { volume, target: '/workspace' },
        env: { HOME: '/tmp' },
      },
      { timeoutMs: 60_000 },
    );
    const [kernel, head] = result.stdout.trim().split('\n');
    expect(kernel).not.toBe(execFileSync('uname', ['-r']).toString().trim());
    expect(head).toBe(base);
    const info = await docker.getVolume(volume).inspect();
    expect(info.Labels['proctor.role']).toBe('solver');
  });
});
