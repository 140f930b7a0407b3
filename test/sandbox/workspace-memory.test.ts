// Memory-backed workspaces (workspace-start.ts, medium `memory`) on the real engine: a tmpfs
// volume holding the template's clean tree, owned by the sandbox user, its tree added to the
// memory limit and its room bounded; nothing of one job in the next; a template whose size is
// unknown (an earlier Proctor's `ready` file) or a tree too big goes on disk; the same under
// gVisor. And the template reader those sizes come from lets a process exit (it once held a
// socket to the engine open, and `proctor prune` never ended).
import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { removeContainer } from '../../src/sandbox/container.js';
import { execInContainer } from '../../src/sandbox/exec.js';
import { runToCompletion } from '../../src/sandbox/run.js';
import {
  createTemplateStore,
  listTemplates,
  TEMPLATE_LAYOUT,
  TEMPLATE_MOUNT,
  type TemplateStore,
} from '../../src/sandbox/template.js';
import { LABEL, ownerHost } from '../../src/sandbox/labels.js';
import {
  MEMORY_TREE_MAX_MB,
  startWithWorkspace,
  workspacePlan,
  type WorkspaceContainer,
} from '../../src/sandbox/workspace-start.js';
import { removeVolume } from '../../src/sandbox/volumes.js';
import { dockerScope, fixtureImage, readFromImage, testDocker } from '../helpers/docker.js';
import { spawnTs } from '../helpers/processes.js';
import { onCleanup } from '../helpers/temp.js';

const docker = testDocker();
const scope = dockerScope(docker, 'ws-memory');
const MiB = 2 ** 20;

/** An owner in a home of the test's own, whose templates are pruned after the test. */
const owner = () => scope.templateOwner();

async function start(
  o: ReturnType<typeof owner>,
  templates: TemplateStore,
  options: { medium?: 'memory' | 'disk'; runtime?: string; memoryMb?: number } = {},
): Promise<WorkspaceContainer> {
  const image = await fixtureImage('git-history');
  const started = await startWithWorkspace(docker, {
    owner: o,
    role: 'evaluator',
    image,
    repoPath: '/repo',
    baseCommit: await readFromImage(image, '/base_commit'),
    uid: 1000,
    gid: 1000,
    history: 'none',
    // The copy into memory or disk is what this file checks; overlay.test.ts has the overlay.
    layer: 'copy',
    templates,
    ...(options.medium ? { medium: options.medium } : {}),
    ...(options.runtime ? { runtime: options.runtime } : {}),
    container: {
      workdir: '/repo',
      env: { HOME: '/tmp' },
      limits: { memoryMb: options.memoryMb ?? 256 },
    },
  });
  onCleanup(async () => {
    await removeContainer(started.container).catch(() => undefined);
    await removeVolume(docker, started.workspace).catch(() => undefined);
  });
  return started;
}

async function sh(started: WorkspaceContainer, script: string) {
  return execInContainer(docker, started.container.id, {
    cmd: ['sh', '-c', script],
    user: '1000:1000',
    workdir: '/repo',
    timeoutMs: 60_000,
    outputBytes: 64 * 1024,
  });
}

/** What a clean workspace of the fixture looks like, by the sandbox user's own eyes. */
const SUMMARY = [
  'git -c safe.directory="*" status --porcelain | wc -l',
  'cat a.txt',
  // find, not stat: the gVisor of Debian 12 refuses statx.
  'find . a.txt -maxdepth 0 -printf "%U:%G\\n" | sort -u',
  'test -e untracked.txt && echo UNTRACKED || echo clean',
].join('; ');

describe('a memory-backed workspace', () => {
  it('is a tmpfs volume with the clean tree, the user’s, its tree on top of the memory limit and its room bounded', async () => {
    const started = await start(owner(), createTemplateStore(), { medium: 'memory' });
    expect(started.medium).toBe('memory');
    const treeMb = started.treeMb ?? 0;
    expect(treeMb).toBeGreaterThanOrEqual(16);
    const plan = workspacePlan({ medium: 'memory', container: { limits: { memoryMb: 256 } } }, 1);
    expect(plan.medium).toBe('memory');

    const volume = await docker.getVolume(started.workspace).inspect();
    expect(volume.Options).toMatchObject({ type: 'tmpfs', device: 'tmpfs' });
    // Room for what the task writes: half its memory (256 MiB) over the tree.
    const room = treeMb + 128;
    expect(volume.Options?.['o']).toBe(`size=${room}m,uid=1000,gid=1000,mode=0755,nosuid,nodev`);
    const info = await started.container.inspect();
    expect(info.HostConfig.Memory).toBe((256 + treeMb) * MiB);
    expect(info.HostConfig.MemorySwap).toBe((256 + treeMb) * MiB);

    const clean = await sh(started, `awk '$2 == "/repo" { print $3 }' /proc/mounts; ${SUMMARY}`);
    expect(clean.stderr).toBe('');
    expect(clean.stdout.trim().split('\n')).toEqual(['tmpfs', '0', 'one', '1000:1000', 'clean']);

    // Writing past its room fails at the room, not at the host's memory.
    const full = await sh(
      started,
      `dd if=/dev/zero of=big bs=1M count=${room + 32} 2>&1; du -sm big | cut -f1`,
    );
    expect(full.stdout).toContain('No space left on device');
    const written = Number(full.stdout.trim().split('\n').at(-1));
    expect(written).toBeLessThanOrEqual(room);
    expect(written).toBeGreaterThan(room - treeMb - 8);
  });

  it('holds nothing of the job before: the next one has the clean tree again', async () => {
    const o = owner();
    const templates = createTemplateStore();
    const first = await start(o, templates, { medium: 'memory' });
    const dirty = await sh(first, 'echo junk > a.txt && echo junk > untracked.txt && rm -rf .git');
    expect(dirty.exitCode).toBe(0);
    await removeContainer(first.container);
    await removeVolume(docker, first.workspace);
    const next = await start(o, templates, { medium: 'memory' });
    const clean = await sh(next, SUMMARY);
    expect(clean.stdout.trim().split('\n')).toEqual(['0', 'one', '1000:1000', 'clean']);
    // The template itself was never writable from either.
    const template = await sh(
      next,
      `touch ${TEMPLATE_MOUNT}/tree/x 2>/dev/null && echo wrote || echo refused`,
    );
    expect(template.stdout.trim()).toBe('refused');
  });

  it('goes on disk when asked, with the memory limit as given', async () => {
    const started = await start(owner(), createTemplateStore(), { medium: 'disk' });
    expect(started.medium).toBe('disk');
    expect(started.treeMb).toBeUndefined();
    const volume = await docker.getVolume(started.workspace).inspect();
    expect(volume.Options ?? {}).toEqual({});
    expect((await started.container.inspect()).HostConfig.Memory).toBe(256 * MiB);
    const clean = await sh(started, `awk '$2 == "/repo" { print $3 }' /proc/mounts; ${SUMMARY}`);
    expect(clean.stdout.trim().split('\n').slice(1)).toEqual(['0', 'one', '1000:1000', 'clean']);
    expect(clean.stdout.trim().split('\n')[0]).not.toBe('tmpfs');
  });

  it('goes on disk for a template whose size is unknown (an earlier Proctor made it)', async () => {
    const o = owner();
    // A template made here, then its `ready` file rewritten as an earlier Proctor wrote it:
    // the key alone.
    const made = await start(o, createTemplateStore(), { medium: 'memory' });
    await removeContainer(made.container);
    const [template] = (await listTemplates(docker, o.home)).filter((t) => t.key !== '');
    if (!template) throw new Error('no template made');
    const image = await fixtureImage('git-history');
    const rewrite = await runToCompletion(
      docker,
      {
        owner: o,
        role: 'init',
        image,
        cmd: ['sh', '-c', `printf '%s\\n' "${template.key}" > ${TEMPLATE_MOUNT}/ready`],
        uid: 0,
        gid: 0,
        workdir: '/',
        workspace: { volume: template.name, target: TEMPLATE_MOUNT },
      },
      { timeoutMs: 60_000 },
    );
    expect(rewrite.exitCode).toBe(0);
    // Another process (a store of its own) finds it, and still copies from it, on disk.
    const started = await start(o, createTemplateStore(), { medium: 'memory' });
    expect(started.medium).toBe('disk');
    const clean = await sh(started, SUMMARY);
    expect(clean.stdout.trim().split('\n')).toEqual(['0', 'one', '1000:1000', 'clean']);
  });

  it('never copies from a template of the layout before sizes, and removes it once the new one is made', async () => {
    const o = owner();
    const image = await fixtureImage('git-history');
    const base = await readFromImage(image, '/base_commit');
    // A ready template as an earlier Proctor made it: its key without the layout, no layout
    // label, and a `ready` file holding the key alone.
    const oldKey = createHash('sha256')
      .update([o.home, image, '/repo', base, '1000:1000', 'none'].join('\0'))
      .digest('hex');
    const old = `proctor-template-${oldKey.slice(0, 16)}-${randomBytes(4).toString('hex')}`;
    await docker.createVolume({
      Name: old,
      Labels: {
        [LABEL.home]: o.home,
        [LABEL.host]: ownerHost(o),
        [LABEL.role]: 'template',
        [LABEL.template]: oldKey,
        [LABEL.templateImage]: image,
      },
    });
    onCleanup(async () => {
      await removeVolume(docker, old).catch(() => undefined);
    });
    const made = await runToCompletion(
      docker,
      {
        owner: o,
        role: 'init',
        image,
        cmd: [
          'sh',
          '-c',
          `mkdir ${TEMPLATE_MOUNT}/tree && cp -a /repo/. ${TEMPLATE_MOUNT}/tree/ && chown -R 1000:1000 ${TEMPLATE_MOUNT}/tree && printf '%s\\n' ${oldKey} > ${TEMPLATE_MOUNT}/ready`,
        ],
        uid: 0,
        gid: 0,
        workdir: '/',
        workspace: { volume: old, target: TEMPLATE_MOUNT },
      },
      { timeoutMs: 60_000 },
    );
    expect(made.exitCode).toBe(0);
    const started = await start(o, createTemplateStore(), { medium: 'memory' });
    expect(started.medium).toBe('memory');
    const templates = await listTemplates(docker, o.home);
    expect(templates.map((t) => t.name)).not.toContain(old);
    expect(templates.map((t) => [t.key === oldKey, t.layout])).toEqual([[false, TEMPLATE_LAYOUT]]);
  });

  it('works under gVisor (runsc)', async () => {
    const started = await start(owner(), createTemplateStore(), {
      medium: 'memory',
      runtime: 'runsc',
    });
    expect(started.medium).toBe('memory');
    const clean = await sh(started, `${SUMMARY}; echo more >> a.txt && cat a.txt | wc -l`);
    expect(clean.stderr).toBe('');
    expect(clean.stdout.trim().split('\n')).toEqual(['0', 'one', '1000:1000', 'clean', '2']);
  });
});

describe('workspacePlan', () => {
  const spec = (memoryMb?: number) => ({
    medium: 'memory' as const,
    container: memoryMb === undefined ? {} : { limits: { memoryMb } },
  });

  it('sizes the tree with slack, and the room by the memory limit', () => {
    // 100 MiB of tree: 105 MiB and 16 of slack; room: half of 2048 (the default).
    expect(workspacePlan(spec(), 100 * 1024)).toEqual({
      medium: 'memory',
      treeMb: 121,
      sizeMb: 121 + 1024,
    });
    // Room is at least 64 MiB.
    expect(workspacePlan(spec(64), 1024).sizeMb).toBe(18 + 64);
  });

  it('keeps a workspace on disk unless asked, and a size unknown or too big on disk', () => {
    expect(workspacePlan({ container: {} }, 1024)).toEqual({ medium: 'disk' });
    expect(workspacePlan({ medium: 'disk', container: {} }, 1024)).toEqual({ medium: 'disk' });
    expect(workspacePlan(spec(), undefined)).toEqual({ medium: 'disk' });
    expect(workspacePlan(spec(), MEMORY_TREE_MAX_MB * 1024)).toEqual({ medium: 'disk' });
    expect(workspacePlan(spec(), (MEMORY_TREE_MAX_MB - 200) * 1024).medium).toBe('memory');
  });
});

describe('reading a template', () => {
  it('leaves nothing open: a process that reaped half-made templates exits by itself', async () => {
    const o = owner();
    const made = await start(o, createTemplateStore(), { medium: 'memory' });
    await removeContainer(made.container);
    // Reaping reads every template's `ready` file; the child then returns without exit().
    const child = spawnTs('test/helpers/reap-child.ts', [o.home]);
    const ended = await Promise.race([
      child.exited,
      new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), 20_000)),
    ]);
    expect(ended).toEqual({ code: 0, signal: null });
    // It read the template as ready, and kept it.
    expect(JSON.parse(child.stdout())).toEqual({ removed: [] });
  });
});
