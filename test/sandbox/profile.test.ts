import { describe, expect, it } from 'vitest';
import { isProctorError } from '../../src/errors.js';
import { LABEL } from '../../src/sandbox/labels.js';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import {
  checkAgentEnv,
  hardenedContainerOptions,
  type SandboxSpec,
} from '../../src/sandbox/profile.js';
import { onCleanup, tempDir } from '../helpers/temp.js';
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
      expect((info.Config as { NetworkDisabled?: boolean }).NetworkDisabled ?? false).toBe(false);
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

/** A folder holding a listening socket `model.sock`, as the model proxy makes it. */
async function socketFolder(): Promise<string> {
  const dir = tempDir('proctor-sock-');
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(join(dir, 'model.sock'), resolve));
  onCleanup(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return dir;
}

describe("isolation profile: the model proxy's socket folder, its one bind mount", () => {
  it('mounts a folder that holds the socket alone, read-only, beside the volumes', async () => {
    const dir = await socketFolder();
    const options = hardenedContainerOptions({
      ...base,
      workspace: { volume: 'v', target: '/workspace' },
      proxySocket: { dir, target: '/run/proctor' },
    });
    expect(options.HostConfig?.Mounts).toEqual([
      expect.objectContaining({ Type: 'volume', Source: 'v', Target: '/workspace' }),
      { Type: 'bind', Source: dir, Target: '/run/proctor', ReadOnly: true },
    ]);
    expect(options.HostConfig?.Binds).toEqual([]);
  });

  it('refuses a folder with anything else in it, a socket by another name, or no folder', async () => {
    const extra = await socketFolder();
    writeFileSync(join(extra, 'key.txt'), 'sk-secret');
    rejects(
      { proxySocket: { dir: extra, target: '/run/proctor' } },
      `proxy socket folder ${extra} must hold exactly one socket, model.sock (it holds key.txt, model.sock)`,
    );
    const notSocket = tempDir('proctor-sock-');
    writeFileSync(join(notSocket, 'model.sock'), '');
    rejects(
      { proxySocket: { dir: notSocket, target: '/run/proctor' } },
      'must hold exactly one socket, model.sock (it holds model.sock)',
    );
    const link = join(tempDir('proctor-sock-'), 'link');
    symlinkSync(await socketFolder(), link);
    rejects({ proxySocket: { dir: link, target: '/run/proctor' } }, `${link} is not a folder`);
    const home = tempDir('proctor-sock-');
    mkdirSync(join(home, 'empty'));
    rejects(
      { proxySocket: { dir: join(home, 'empty'), target: '/run/proctor' } },
      'must hold exactly one socket, model.sock (it holds nothing)',
    );
    rejects({ proxySocket: { dir: 'relative', target: '/run/proctor' } }, 'without .. or NUL');
    rejects(
      {
        workspace: { volume: 'v', target: '/run/proctor/x' },
        proxySocket: { dir: await socketFolder(), target: '/run/proctor' },
      },
      'workspace /run/proctor/x overlaps the harness mount /run/proctor',
    );
  });
});

describe("isolation profile: the agent's environment", () => {
  const TOKEN = 'a'.repeat(64);
  const fails = (env: Record<string, string>, message: string, secrets: string[] = []) => {
    try {
      checkAgentEnv(env, TOKEN, secrets);
      expect.unreachable();
    } catch (error) {
      expect(isProctorError(error, 'SANDBOX_INVALID')).toBe(true);
      expect((error as Error).message).toContain(message);
    }
  };

  it('admits the run token, exactly, under a credential-like name', () => {
    expect(() =>
      checkAgentEnv({ OPENAI_API_KEY: TOKEN, ANTHROPIC_AUTH_TOKEN: TOKEN, HOME: '/h' }, TOKEN, [
        'sk-real',
      ]),
    ).not.toThrow();
  });

  it('refuses anything else there, and a provider key under any name', () => {
    fails({ OPENAI_API_KEY: 'sk-real' }, 'credential-like environment variable OPENAI_API_KEY');
    fails({ OPENAI_API_KEY: `${TOKEN}x` }, 'credential-like environment variable OPENAI_API_KEY');
    fails({ GITHUB_TOKEN: '' }, 'credential-like environment variable GITHUB_TOKEN');
    fails({ NOTES: 'key is sk-real here' }, 'environment variable NOTES holds a provider key', [
      'sk-real',
    ]);
    fails({ 'BAD-NAME': 'x' }, 'invalid environment name');
    try {
      checkAgentEnv({}, 'short', []);
      expect.unreachable();
    } catch (error) {
      expect((error as Error).message).toContain('the run token must be 16 to 256');
    }
    try {
      checkAgentEnv({}, TOKEN, [TOKEN]);
      expect.unreachable();
    } catch (error) {
      expect((error as Error).message).toContain('the run token is a provider key');
    }
  });
});
