// Overlay workspaces (overlay.ts, workspace-start.ts) on the real engine: the work tree is an
// overlay on the template's tree, nothing copied, with the container's profile unchanged; what
// one job writes, in its ignored trees too, is never seen by another job or written to the
// template; capture reads the merged work tree; and the copy is made, correct, wherever the
// overlay cannot be: when asked, under gVisor, and when the engine cannot mount it.
import { readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { DockerClient } from '../../src/sandbox/docker.js';
import { capturePatch } from '../../src/sandbox/capture.js';
import { removeContainer } from '../../src/sandbox/container.js';
import { runToCompletion } from '../../src/sandbox/run.js';
import { execInContainer } from '../../src/sandbox/exec.js';
import { LABEL, labelsFor } from '../../src/sandbox/labels.js';
import { overlayOptions } from '../../src/sandbox/overlay.js';
import { overlaySeenOnHost } from '../../src/sandbox/overlay-check.js';
import { removeOwned } from '../../src/sandbox/cleanup.js';
import {
  createTemplateStore,
  TEMPLATE_MOUNT,
  type TemplateStore,
} from '../../src/sandbox/template.js';
import {
  startWithWorkspace,
  type WorkspaceContainer,
  type WorkspaceContainerSpec,
} from '../../src/sandbox/workspace-start.js';
import { dockerScope, fixtureImage, readFromImage, testDocker } from '../helpers/docker.js';
import { onCleanup, tempDir } from '../helpers/temp.js';

const docker = testDocker();
const scope = dockerScope(docker, 'ws-overlay');
const owner = () => scope.templateOwner();

/** The fixture's work tree as built: a tracked tree, and `build/` and `*.out` ignored. */
async function start(
  o: ReturnType<typeof owner>,
  templates: TemplateStore,
  options: Partial<Pick<WorkspaceContainerSpec, 'layer' | 'runtime' | 'medium' | 'role'>> = {},
  client: DockerClient = docker,
): Promise<WorkspaceContainer> {
  const image = await fixtureImage('git-ignored');
  const started = await startWithWorkspace(client, {
    owner: o,
    role: 'solver',
    image,
    repoPath: '/repo',
    baseCommit: await readFromImage(image, '/base_commit'),
    uid: 1000,
    gid: 1000,
    templates,
    ...options,
    container: { workdir: '/repo', env: { HOME: '/tmp' } },
  });
  onCleanup(() => removeContainer(started.container).catch(() => undefined));
  return started;
}

async function sh(started: WorkspaceContainer, script: string) {
  const result = await execInContainer(docker, started.container.id, {
    cmd: ['sh', '-c', script],
    user: '1000:1000',
    workdir: '/repo',
    timeoutMs: 60_000,
    outputBytes: 64 * 1024,
  });
  expect(result.stderr).toBe('');
  expect(result.exitCode).toBe(0);
  return result.stdout.trim().split('\n');
}

/** The file system at /repo, then the clean tree as the sandbox user sees it. */
const SUMMARY = [
  `awk '$2 == "/repo" { print $3 }' /proc/mounts`,
  'git -c safe.directory="*" status --porcelain --ignored | sort | paste -sd " " -',
  'cat a.txt old.txt a.out build/lib/ext.so',
  // find, not stat: the gVisor of Debian 12 refuses statx.
  'find . a.txt build build/lib/ext.so -maxdepth 0 -printf "%U:%G\\n" | sort -u',
  'test -e untracked.txt || test -e local.txt && echo STRAY || echo clean',
  'touch new-at-root && rm new-at-root && echo writable',
].join('; ');

const clean = (fs: string) => [
  fs,
  '!! a.out !! build/',
  'one',
  'old',
  'built',
  'compiled',
  '1000:1000',
  'clean',
  'writable',
];

/** A digest of the template's tree, names, modes and contents, read in a job's container. */
const TEMPLATE_DIGEST = `cd ${TEMPLATE_MOUNT}/tree && find . -printf "%p %m %s\\n" | sort | sha256sum && find . -type f -exec sha256sum {} + | sort | sha256sum`;

/** The job's volumes on the engine, by role label. */
async function volumesOf(o: ReturnType<typeof owner>) {
  const { Volumes } = await docker.listVolumes({
    filters: { label: [`${LABEL.job}=${o.job}`] },
  });
  return (Volumes ?? []).map((v) => ({ name: v.Name, options: v.Options ?? {} }));
}

describe('an overlay workspace', () => {
  it('is the template’s clean tree, ignored files and all, with nothing copied and the container’s profile unchanged', async () => {
    const o = owner();
    const started = await start(o, createTemplateStore());
    expect(started.medium).toBe('overlay');
    expect(started.fallback).toBeUndefined();
    expect(started.layerVolume).toBeDefined();
    const overlay = await docker.getVolume(started.workspace).inspect();
    expect(overlay.Options).toMatchObject({ type: 'overlay', device: 'overlay' });
    expect(overlay.Labels?.[LABEL.job]).toBe(o.job);
    const layer = await docker.getVolume(started.layerVolume ?? '').inspect();
    expect(layer.Labels?.[LABEL.job]).toBe(o.job);
    expect(overlay.Options?.['o']).toContain(`upperdir=${layer.Mountpoint}/upper,`);

    expect(await sh(started, SUMMARY)).toEqual(clean('overlay'));
    // The layer holds nothing yet: the tree was not copied.
    const du = await sh(started, `git -c safe.directory="*" rev-parse HEAD`);
    expect(du).toEqual([await readFromImage(await fixtureImage('git-ignored'), '/base_commit')]);

    const info = await started.container.inspect();
    expect(info.HostConfig.CapDrop).toEqual(['ALL']);
    expect(info.HostConfig.CapAdd ?? []).toEqual([]);
    expect(info.HostConfig.ReadonlyRootfs).toBe(true);
    expect(info.HostConfig.Privileged).toBe(false);
    expect(info.HostConfig.SecurityOpt).toContain('no-new-privileges');
    const caps = await sh(started, 'grep -E "^Cap(Eff|Prm|Bnd)" /proc/self/status | cut -f2');
    expect(caps).toEqual(['0000000000000000', '0000000000000000', '0000000000000000']);
  });

  it('keeps what one job writes, in its ignored trees too, from every other job and from the template', async () => {
    const o = owner();
    const templates = createTemplateStore();
    const [first, second] = await Promise.all([start(o, templates), start(o, templates)]);
    expect([first.medium, second.medium]).toEqual(['overlay', 'overlay']);
    const before = await sh(second, TEMPLATE_DIGEST);

    await sh(
      first,
      [
        'echo changed >> build/lib/ext.so',
        'rm a.out old.txt',
        'rm -rf build/lib',
        'mkdir -p build/cache && echo junk > build/cache/x',
        'echo edited > a.txt',
        'echo untracked > untracked.txt',
        'rm -rf .git',
      ].join('; '),
    );
    // The other job, running at the same time, sees none of it.
    expect(await sh(second, SUMMARY)).toEqual(clean('overlay'));
    // Nor can the job reach the template: it is mounted read-only, and the overlay never
    // writes its lower layer.
    const write = await execInContainer(docker, first.container.id, {
      cmd: ['sh', '-c', `echo x >> ${TEMPLATE_MOUNT}/tree/a.txt`],
      user: '1000:1000',
      timeoutMs: 30_000,
      outputBytes: 4096,
    });
    expect(write.exitCode).not.toBe(0);
    expect(await sh(second, TEMPLATE_DIGEST)).toEqual(before);

    // The next job, after the first is gone, has the clean tree again.
    await removeContainer(first.container);
    const next = await start(o, templates);
    expect(await sh(next, SUMMARY)).toEqual(clean('overlay'));
    expect(await sh(next, TEMPLATE_DIGEST)).toEqual(before);
  });

  it('is captured as a work tree: the candidate is what the job changed, nothing of the ignored trees', async () => {
    const o = owner();
    const started = await start(o, createTemplateStore());
    await sh(
      started,
      'echo edited > a.txt && rm old.txt && echo new > new.txt && echo more >> build/lib/ext.so && echo x > b.out',
    );
    const image = await fixtureImage('git-ignored');
    const captured = await capturePatch(docker, {
      owner: o,
      image,
      repoPath: '/repo',
      baseCommit: await readFromImage(image, '/base_commit'),
      volume: started.workspace,
      solverContainerId: started.container.id,
      uid: 1000,
      gid: 1000,
      patchBytes: 1024 * 1024,
      candidateFiles: 200,
    });
    const patch = captured.patch.toString('utf8');
    const files = [...patch.matchAll(/^diff --git a\/(\S+) /gm)].map((m) => m[1]);
    expect(files).toEqual(['a.txt', 'new.txt', 'old.txt']);
    expect(patch).toContain('deleted file mode 100644');
    expect(patch).not.toContain('ext.so');
    expect(patch).not.toContain('b.out');
  });

  it('goes with the job: its overlay and its layer are labelled volumes that the job’s cleanup removes', async () => {
    const o = owner();
    const started = await start(o, createTemplateStore());
    await sh(started, 'echo junk > build/junk');
    const made = await volumesOf(o);
    expect(made.map((v) => v.name).sort()).toEqual(
      [started.workspace, started.layerVolume ?? ''].sort(),
    );
    await removeOwned(docker, o);
    expect(await volumesOf(o)).toEqual([]);
    const { Volumes } = await docker.listVolumes({
      filters: { label: [`${LABEL.job}=${o.job}`] },
    });
    expect(Volumes ?? []).toEqual([]);
  });
});

/** The execs the engine made in a container from `since` (seconds) to now. */
async function execsIn(container: string, since: number): Promise<string[]> {
  const stream = await docker.getEvents({
    since,
    until: Math.ceil(Date.now() / 1000) + 1,
    filters: { container: [container], type: ['container'] },
  });
  const text = await new Promise<string>((settle, fail) => {
    let all = '';
    stream.on('data', (chunk: Buffer) => (all += chunk.toString()));
    stream.on('end', () => settle(all));
    stream.on('error', fail);
  });
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => (JSON.parse(line) as { Action: string }).Action)
    .filter((action) => action.startsWith('exec_create'));
}

describe('an overlay workspace’s check', () => {
  it('is read on this host, with no exec in the container, where the engine’s folders are this process’s', async () => {
    const since = Math.floor(Date.now() / 1000) - 1;
    const started = await start(owner(), createTemplateStore());
    expect(started.medium).toBe('overlay');
    expect(await execsIn(started.container.id, since)).toEqual([]);
    // The tree the job sees is still the clean one, and its check's exec still passes.
    expect(await sh(started, SUMMARY)).toEqual(clean('overlay'));
  });

  it('is left to the exec whenever the host saw anything else', async () => {
    const started = await start(owner(), createTemplateStore());
    const info = await started.container.inspect();
    const template = (info.Mounts ?? []).find((m) => m.Destination === TEMPLATE_MOUNT)?.Source;
    if (template === undefined) throw new Error('no template mount');
    const key = (await readFile(join(template, 'ready'), 'utf8')).split(/[ \n]/)[0] ?? '';
    const check = { template, overlay: started.workspace, key, uid: 1000 };
    // What the exec would see: the host sees it too.
    expect(await overlaySeenOnHost(docker, check)).toBe(true);
    // Another key, another owner, another runtime, a volume that is no overlay: not seen.
    expect(await overlaySeenOnHost(docker, { ...check, key: 'f'.repeat(64) })).toBe(false);
    expect(await overlaySeenOnHost(docker, { ...check, uid: 1001 })).toBe(false);
    expect(await overlaySeenOnHost(docker, { ...check, runtime: 'runsc' })).toBe(false);
    expect(await overlaySeenOnHost(docker, { ...check, overlay: started.layerVolume ?? '' })).toBe(
      false,
    );
    expect(await overlaySeenOnHost(docker, { ...check, overlay: 'proctor-no-such-volume' })).toBe(
      false,
    );
    // A template whose top-level names are not what the overlay shows, or that is not ready.
    const other = tempDir();
    await writeFile(join(other, 'ready'), `${key} 12\n`);
    await writeFile(join(other, 'top'), 'a.txt\nelsewhere\n');
    expect(await overlaySeenOnHost(docker, { ...check, template: other })).toBe(false);
    await writeFile(
      join(other, 'top'),
      (await readFile(join(template, 'top'), 'utf8').catch(() => '')) ||
        (await readdir(join(template, 'tree'))).join('\n'),
    );
    expect(await overlaySeenOnHost(docker, { ...check, template: other })).toBe(true);
    await writeFile(join(other, 'ready.new'), `${key}\n`);
    await rm(join(other, 'ready'));
    expect(await overlaySeenOnHost(docker, { ...check, template: other })).toBe(false);
  });
});

describe('an overlay over a template removed under the store', () => {
  it('is made over a new template, as a copy is, when another process pruned the one the store remembers', async () => {
    const o = owner();
    const templates = createTemplateStore();
    const first = await start(o, templates);
    const mountOf = async (started: WorkspaceContainer) =>
      ((await started.container.inspect()).Mounts ?? []).find(
        (m) => m.Destination === TEMPLATE_MOUNT,
      )?.Name;
    const gone = await mountOf(first);
    expect(gone).toBeDefined();
    await removeOwned(docker, o);
    await docker.getVolume(gone ?? '').remove();
    const second = await start(o, templates);
    expect(second.medium).toBe('overlay');
    expect(second.fallback).toBeUndefined();
    const now = await mountOf(second);
    expect(now).toBeDefined();
    expect(now).not.toBe(gone);
    expect(await sh(second, SUMMARY)).toEqual(clean('overlay'));
  });
});

describe('the copy instead of an overlay', () => {
  it('is made when the spec asks for it, with the same clean tree', async () => {
    const o = owner();
    const started = await start(o, createTemplateStore(), { layer: 'copy' });
    expect(started.medium).toBe('disk');
    expect(started.fallback).toBeUndefined();
    expect(started.layerVolume).toBeUndefined();
    const fs = (await sh(started, SUMMARY))[0] ?? '';
    expect(fs).not.toBe('overlay');
    expect(await sh(started, SUMMARY)).toEqual(clean(fs));
    // No overlay and no layer were made.
    const made = await volumesOf(o);
    expect(made.map((v) => v.name)).toEqual([started.workspace]);
  });

  it('is made under gVisor (runsc), which reads overlay volumes wrong, and says why', async () => {
    const o = owner();
    const started = await start(o, createTemplateStore(), { runtime: 'runsc', medium: 'memory' });
    expect(started.medium).toBe('memory');
    expect(started.fallback).toBe(
      'the runsc runtime does not read overlay volumes (copied instead)',
    );
    // gVisor shows its mounts as 9p.
    expect(await sh(started, SUMMARY)).toEqual(clean('9p'));
    expect((await volumesOf(o)).map((v) => v.name)).toEqual([started.workspace]);
  });

  it('is made, and the process copies from then on, when the engine cannot mount the overlay', async () => {
    // The real engine, told a template Mountpoint that does not exist: its mount fails at the
    // container's start, as on an engine whose kernel or privileges allow no overlay.
    const broken = engineWithMountpoint(() => '/nonexistent/proctor-template');
    const o = owner();
    const templates = createTemplateStore();
    const started = await start(o, templates, {}, broken);
    expect(started.medium).toBe('disk');
    expect(started.fallback).toMatch(/^the engine cannot mount an overlay: .*mount/);
    expect(await sh(started, SUMMARY)).toEqual(clean((await sh(started, SUMMARY))[0] ?? ''));
    // The overlay and its layer went; only the copy is left.
    expect((await volumesOf(o)).map((v) => v.name)).toEqual([started.workspace]);
    // Asked once: the next job of the process copies at once (the real engine, this time).
    expect(templates.layers.refused).toBe(started.fallback);
    const next = await start(o, templates);
    expect(next.medium).toBe('disk');
    expect(next.fallback).toBe(started.fallback);
  });

  it('is made when the container does not see the template’s tree through the overlay', async () => {
    // An overlay the engine mounts, over another tree (an empty one): what a runtime that
    // mounts an overlay and reads it wrong would show. The job's own check finds it out.
    const o = owner();
    const other = `proctor-${o.job}-other`;
    await docker.createVolume({ Name: other, Labels: labelsFor(o, 'probe') });
    const made = await runToCompletion(
      docker,
      {
        owner: o,
        role: 'init',
        image: await fixtureImage('git-ignored'),
        cmd: ['mkdir', '/v/tree'],
        uid: 0,
        gid: 0,
        workdir: '/',
        workspace: { volume: other, target: '/v' },
      },
      { timeoutMs: 60_000 },
    );
    expect(made.exitCode).toBe(0);
    const path = (await docker.getVolume(other).inspect()).Mountpoint;
    const templates = createTemplateStore();
    const started = await start(
      o,
      templates,
      {},
      engineWithMountpoint(() => path),
    );
    expect(started.medium).toBe('disk');
    expect(started.fallback).toBe(
      "the container does not see the template through an overlay (the overlay does not show the template's tree (it shows: nothing))",
    );
    expect(await sh(started, SUMMARY)).toEqual(clean((await sh(started, SUMMARY))[0] ?? ''));
    expect((await volumesOf(o)).map((v) => v.name).sort()).toEqual(
      [other, started.workspace].sort(),
    );
    expect(templates.layers.refused).toBe(started.fallback);
  });

  it('is made when the template’s volume has no Mountpoint an overlay can name', async () => {
    const o = owner();
    const started = await start(
      o,
      createTemplateStore(),
      {},
      engineWithMountpoint(() => '/var/lib/docker/volumes/a,b/_data'),
    );
    expect(started.medium).toBe('disk');
    expect(started.fallback).toMatch(
      /has no Mountpoint an overlay can name \("\/var\/lib\/docker\/volumes\/a,b\/_data"\)$/,
    );
    expect(await sh(started, SUMMARY)).toEqual(clean((await sh(started, SUMMARY))[0] ?? ''));
    expect((await volumesOf(o)).map((v) => v.name)).toEqual([started.workspace]);
  });
});

describe('overlay options', () => {
  it('refuse a path the mount options cannot carry, with a one-line error', () => {
    expect(() => overlayOptions('/a,upperdir=/etc', '/b')).toThrow(
      'an overlay cannot name the path "/a,upperdir=/etc"',
    );
    expect(() => overlayOptions('/a/../etc', '/b')).toThrow('an overlay cannot name the path');
    expect(overlayOptions('/t/tree', '/l')).toEqual({
      type: 'overlay',
      device: 'overlay',
      o: 'lowerdir=/t/tree,upperdir=/l/upper,workdir=/l/work,nosuid,nodev',
    });
  });
});

/**
 * The real engine, except that inspecting a template volume reports `mountpoint()` as its
 * Mountpoint: what an engine whose volumes live elsewhere, or cannot be named, would say.
 */
function engineWithMountpoint(mountpoint: () => string): DockerClient {
  return new Proxy(docker, {
    get(target, key, receiver) {
      if (key !== 'getVolume') return Reflect.get(target, key, receiver) as unknown;
      return (name: string) => {
        const volume = target.getVolume(name);
        if (!name.startsWith('proctor-template-')) return volume;
        return new Proxy(volume, {
          get(v, k, r) {
            if (k !== 'inspect') return Reflect.get(v, k, r) as unknown;
            return async () => ({ ...(await v.inspect()), Mountpoint: mountpoint() });
          },
        });
      };
    },
  });
}
