import { describe, expect, it } from 'vitest';
import { isProctorError } from '../../src/errors.js';
import { LABEL } from '../../src/sandbox/labels.js';
import { hardenedContainerOptions, type SandboxSpec } from '../../src/sandbox/profile.js';
import { fixtureImage, testDocker, testOwner } from '../helpers/docker.js';

const IMAGE = `sha256:${'a'.repeat(64)}`;
const owner = { job: '42', attempt: 1, home: '/h' };
const base: SandboxSpec = {
  owner,
  role: 'solver',
  image: IMAGE,
  cmd: ['true'],
  uid: 1000,
  gid: 1000,
  workdir: '/workspace',
};

function rejects(spec: Partial<SandboxSpec>, message: string) {
  try {
    hardenedContainerOptions({ ...base, ...spec });
    expect.unreachable();
  } catch (error) {
    expect(isProctorError(error, 'SANDBOX_INVALID')).toBe(true);
    expect((error as Error).message).toContain(message);
  }
}

describe('isolation profile: validation', () => {
  it.each([
    [{ uid: 0 }, 'uid must be non-zero for a solver container'],
    [{ gid: 0, role: 'evaluator' as const }, 'gid must be non-zero for a evaluator container'],
    [{ uid: -1 }, 'uid must be a numeric id'],
    [{ uid: 1.5 }, 'uid must be a numeric id'],
    [{ image: 'debian:bookworm-slim' }, 'image must be a daemon-local image id'],
    [{ env: { OPENAI_API_KEY: 'x' } }, 'credential-like environment variable OPENAI_API_KEY'],
    [{ env: { GITHUB_TOKEN: 'x' } }, 'credential-like environment variable GITHUB_TOKEN'],
    [{ env: { 'BAD-NAME': 'x' } }, 'invalid environment name'],
    [
      { workspace: { volume: 'v', target: '/tmp/ws' } },
      'workspace /tmp/ws overlaps the harness mount /tmp',
    ],
    [{ workspace: { volume: 'v', target: '/' } }, 'overlaps'],
    [
      {
        workspace: { volume: 'v', target: '/work' },
        mounts: [{ volume: 'c', target: '/work/candidate' }],
      },
      'overlaps the harness mount /work/candidate',
    ],
    [{ workspace: { volume: 'v', target: '/w/../etc' } }, 'without .. or NUL'],
    [{ limits: { memoryMb: 1 } }, 'memory_mb'],
    [{ limits: { pids: 0 } }, 'pids'],
    [{ tmpfs: [{ path: '/tmp', sizeMb: 0 }] }, 'tmpfs /tmp size'],
  ])('rejects %j', (spec, message) => rejects(spec, message));

  it('gives the init container root with only CHOWN, DAC_OVERRIDE and FOWNER', () => {
    const options = hardenedContainerOptions({ ...base, role: 'init', uid: 0, gid: 0 });
    expect(options.User).toBe('0:0');
    expect(options.HostConfig?.CapAdd).toEqual(['CHOWN', 'DAC_OVERRIDE', 'FOWNER']);
    expect(options.HostConfig?.CapDrop).toEqual(['ALL']);
  });
});

describe('isolation profile: docker inspect of real containers', () => {
  it.each(['solver', 'evaluator', 'capture', 'init'] as const)(
    'shows every field for a %s container',
    async (role) => {
      const docker = testDocker();
      const image = await fixtureImage('git-history');
      const testOwnerId = testOwner(docker, 'profile');
      const volume = `proctor-test-${testOwnerId.job}`;
      await docker.createVolume({
        Name: volume,
        Labels: {
          [LABEL.job]: testOwnerId.job,
          [LABEL.attempt]: '1',
          [LABEL.home]: testOwnerId.home,
        },
      });
      const isInit = role === 'init';
      const container = await docker.createContainer(
        hardenedContainerOptions({
          owner: testOwnerId,
          role,
          image,
          cmd: ['sleep', 'infinity'],
          uid: isInit ? 0 : 1000,
          gid: isInit ? 0 : 1000,
          workdir: '/workspace',
          workspace: { volume, target: '/workspace', readOnly: role === 'capture' },
          tmpfs: [
            { path: '/tmp', sizeMb: 32 },
            { path: '/proctor', sizeMb: 8, exec: true },
          ],
          env: { TZ: 'UTC', LC_ALL: 'C.UTF-8' },
          limits: { cpus: 0.5, memoryMb: 256, pids: 64 },
        }),
      );
      const info = await container.inspect();
      const host = info.HostConfig;
      expect(info.Config.User).toBe(isInit ? '0:0' : '1000:1000');
      expect((info.Config as { NetworkDisabled?: boolean }).NetworkDisabled).toBe(true);
      expect(host.NetworkMode).toBe('none');
      expect(host.ReadonlyRootfs).toBe(true);
      expect(host.CapDrop).toEqual(['ALL']);
      expect(host.CapAdd ?? []).toEqual(isInit ? ['CHOWN', 'DAC_OVERRIDE', 'FOWNER'] : []);
      expect(host.SecurityOpt).toEqual(['no-new-privileges']);
      expect(host.Privileged).toBe(false);
      expect(host.Devices ?? []).toEqual([]);
      expect(host.Binds ?? []).toEqual([]);
      expect(host.Memory).toBe(256 * 1024 * 1024);
      expect(host.MemorySwap).toBe(host.Memory);
      expect(host.NanoCpus).toBe(0.5e9);
      expect(host.PidsLimit).toBe(64);
      expect(host.Tmpfs).toEqual({
        '/tmp': 'rw,nosuid,nodev,noexec,size=32m,mode=1777',
        '/proctor': 'rw,nosuid,nodev,exec,size=8m,mode=1777',
      });
      // Only named volumes: no bind mount, so no Docker socket and no host path.
      expect(host.Mounts).toHaveLength(1);
      expect(host.Mounts?.[0]).toMatchObject({
        Type: 'volume',
        Source: volume,
        Target: '/workspace',
      });
      expect(host.Mounts?.[0]?.ReadOnly ?? false).toBe(role === 'capture');
      expect(info.Mounts.every((m) => m.Type === 'volume' || m.Type === 'tmpfs')).toBe(true);
      expect(JSON.stringify(info)).not.toContain('docker.sock');
      expect(info.Config.Env.map((e) => e.split('=')[0])).not.toEqual(
        expect.arrayContaining([expect.stringMatching(/KEY|TOKEN|SECRET|PASSW/i)]),
      );
      expect(info.Config.Labels).toMatchObject({
        [LABEL.job]: testOwnerId.job,
        [LABEL.role]: role,
        [LABEL.attempt]: '1',
      });
    },
  );
});
