// Layered workspace templates (image-layers.ts, template.ts) on the real engine: a template made
// over the image's own layers copies none of the image's tree (a big ignored file stays in its
// layer; the template holds metadata alone), and a job's overlay on it shows the image's work
// tree as a copied template would: the files of later layers, none that a later layer deleted,
// no untracked stray, the template's own repository, all the sandbox user's and writable but
// for an installed package (root's and read-only, as site-packages is), and
// nothing one job writes reaches the template or another job; an entry the image already gave
// the sandbox user is not copied up to be handed over. An image whose layers do not add
// up to its tree (a layer that made the folder anew) gets a copied template, and the store says
// why.
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { removeContainer } from '../../src/sandbox/container.js';
import { execInContainer } from '../../src/sandbox/exec.js';
import { LABEL } from '../../src/sandbox/labels.js';
import {
  MAX_LOWERS_LENGTH,
  layerStack,
  layerState,
  lowersPresent,
  stackOfLayers,
} from '../../src/sandbox/image-layers.js';
import {
  createTemplateStore,
  HALF_MADE_AGE_MS,
  listImageTemplates,
  reapTemplates,
  removeTemplate,
  TEMPLATE_LAYOUT,
  TEMPLATE_MOUNT,
  templateKey,
  type TemplateStore,
} from '../../src/sandbox/template.js';
import { pruneTemplates } from '../../src/sandbox/template-prune.js';
import { repoSpec } from '../helpers/templates.js';
import {
  startWithWorkspace,
  type WorkspaceContainer,
  type WorkspaceContainerSpec,
} from '../../src/sandbox/workspace-start.js';
import { dockerScope, fixtureImage, readFromImage, testDocker } from '../helpers/docker.js';
import { onCleanup } from '../helpers/temp.js';

const docker = testDocker();
const scope = dockerScope(docker, 'ws-layered');
const owner = () => scope.templateOwner();

async function start(
  fixture: string,
  templates: TemplateStore,
  options: Partial<Pick<WorkspaceContainerSpec, 'layer' | 'role' | 'history'>> = {},
): Promise<WorkspaceContainer> {
  const image = await fixtureImage(fixture);
  const started = await startWithWorkspace(docker, {
    owner: owner(),
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

async function sh(started: WorkspaceContainer, script: string): Promise<string[]> {
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

const git = 'git -c safe.directory="*"';

describe('a layered template', () => {
  it('copies nothing of the image’s tree, and a job’s overlay shows the tree as built, the sandbox user’s', async () => {
    const templates = createTemplateStore();
    const started = await start('git-layers', templates);
    const image = await fixtureImage('git-layers');
    expect(started.medium).toBe('overlay');
    expect(started.fallback).toBeUndefined();
    expect(templates.layerRefusal(image, '/repo')).toBeUndefined();
    // The job's overlay stacks the template's tree on the image's own layers.
    const overlay = await docker.getVolume(started.workspace).inspect();
    const options = overlay.Options?.['o'] ?? '';
    expect(options).toContain('metacopy=on');
    const lowers = /lowerdir=([^,]+)/.exec(options)?.[1]?.split(':') ?? [];
    expect(lowers.length).toBeGreaterThanOrEqual(3);
    expect(lowers[0]).toMatch(/\/tree$/);
    for (const lower of lowers.slice(1)) expect(lower).toMatch(/\/diff\/repo$/);

    const base = await readFromImage(image, '/base_commit');
    expect(
      await sh(
        started,
        [
          `${git} status --porcelain --ignored | sort | paste -sd " " -`,
          'cat a.txt build/later.out',
          'test -e build/gone.out && echo GONE-IS-BACK || echo gone-is-gone',
          'test -e stray.txt && echo STRAY || echo no-stray',
          'sha256sum build/big.out',
          // Everything but the installed package (its own test below) is the sandbox user's.
          `find . -path ./.git -prune -o -path '*/node_modules/[!.]*' -prune -o -printf "%U:%G\\n" | sort -u`,
          `${git} rev-parse HEAD`,
          `${git} rev-list --all | wc -l`,
        ].join('; '),
      ),
    ).toEqual([
      '!! build/ !! node_modules/',
      'one',
      'later',
      'gone-is-gone',
      'no-stray',
      (await readFromImage(image, '/big.sha256')).trim(),
      '1000:1000',
      base,
      '1',
    ]);
    // The template holds the big file's metadata only: its data stayed in the image's layer.
    const [blocks, size] = await sh(
      started,
      `stat -c %b ${TEMPLATE_MOUNT}/tree/build/big.out; du -sk ${TEMPLATE_MOUNT}/tree | cut -f1`,
    );
    expect(Number(blocks)).toBeLessThan(64);
    expect(Number(size)).toBeLessThan(1000);
    // No view of the preparation is left behind.
    const { Volumes } = await docker.listVolumes({ filters: { name: ['-view'] } });
    expect(
      (Volumes ?? []).filter((v) => v.Name.includes(String(overlay.Labels?.[LABEL.job]))),
    ).toEqual([]);
  });

  it('leaves an installed package root’s and read-only, and hands over what a job must read, run or write', async () => {
    const started = await start('git-layers', createTemplateStore());
    expect(started.medium).toBe('overlay');
    const mode = (path: string) => `stat -c '%u %a' ${path}`;
    expect(
      await sh(
        started,
        [
          // The package stays as installed: root's, readable, not to be rewritten in place.
          mode('node_modules/pkg/index.js'),
          mode('node_modules/pkg'),
          'cat node_modules/pkg/index.js',
          '(echo x >> node_modules/pkg/index.js) 2>/dev/null && echo REWRITTEN || echo read-only',
          // What only its owner could read or run, and a setuid file, are handed over (the bit
          // cleared).
          'cat node_modules/pkg/private.txt',
          'node_modules/pkg/run.sh',
          mode('node_modules/pkg/suid'),
          // node_modules itself, its dot-folders and a tracked fixture under one are the job's.
          mode('node_modules'),
          `stat -c %u node_modules/.bin node_modules/.bin/pkg node_modules/.cache/c.json | paste -sd " " -`,
          `echo '{"a":1}' > node_modules/.cache/c.json; cat node_modules/.cache/c.json`,
          'echo added > node_modules/added.js; cat node_modules/added.js',
          mode('fixtures/node_modules/dep/index.js'),
          'echo changed > fixtures/node_modules/dep/index.js; cat fixtures/node_modules/dep/index.js',
        ].join('; '),
      ),
    ).toEqual([
      '0 644',
      '0 755',
      'module.exports = 1',
      'read-only',
      'private',
      'ran',
      '1000 755',
      '1000 755',
      '1000 1000 1000',
      '{"a":1}',
      'added',
      '1000 644',
      'changed',
    ]);
  });

  it('hands over only what the image has not given the sandbox user already, so those entries stay in the image’s layers', async () => {
    const started = await start('git-owned', createTemplateStore());
    expect(started.medium).toBe('overlay');
    expect(
      await sh(
        started,
        [
          'cat a.txt b.txt src/c.txt build/out.txt',
          `${git} status --porcelain --ignored`,
          `find . -path ./.git -prune -o -printf "%U:%G\\n" | sort -u`,
          // The template's own layer: the file the reset wrote back (its index was another
          // tree's) and the install's output, root's in the image; nothing the image gave the
          // sandbox user already.
          `cd ${TEMPLATE_MOUNT}/tree && find . -path ./.git -prune -o -path . -o -printf "%p\\n" | sort | paste -sd " " -`,
        ].join('; '),
      ),
    ).toEqual([
      'one',
      'two',
      'code',
      'built',
      '!! build/',
      '1000:1000',
      './b.txt ./build ./build/out.txt',
    ]);
  });

  it('keeps what one job writes, to an image file and the tree, from the template and every other job', async () => {
    const templates = createTemplateStore();
    const first = await start('git-layers', templates);
    const second = await start('git-layers', templates);
    expect(
      await sh(
        first,
        'echo changed >> build/big.out; echo two > a.txt; rm build/later.out; echo new > n.txt; echo done',
      ),
    ).toEqual(['done']);
    const image = await fixtureImage('git-layers');
    expect(
      await sh(
        second,
        'sha256sum build/big.out; cat a.txt build/later.out; test -e n.txt && echo LEAK || echo none',
      ),
    ).toEqual([(await readFromImage(image, '/big.sha256')).trim(), 'one', 'later', 'none']);
    const third = await start('git-layers', templates);
    expect(await sh(third, 'sha256sum build/big.out; cat a.txt')).toEqual([
      (await readFromImage(image, '/big.sha256')).trim(),
      'one',
    ]);
  });

  it('is copied instead, and says why, when a layer made the folder anew', async () => {
    const templates = createTemplateStore();
    const started = await start('git-remade', templates);
    const image = await fixtureImage('git-remade');
    expect(started.medium).toBe('overlay');
    expect(templates.layerRefusal(image, '/repo')).toMatch(/do not add up to its tree/);
    const overlay = await docker.getVolume(started.workspace).inspect();
    expect(overlay.Options?.['o']).not.toContain('metacopy');
    expect(
      await sh(
        started,
        `test -e old.out && echo OLD || echo no-old; cat a.txt; ${git} status --porcelain`,
      ),
    ).toEqual(['no-old', 'one']);
    // The next job of the image takes the copied template at once.
    const next = await start('git-remade', templates);
    expect(next.medium).toBe('overlay');
    expect(await sh(next, 'cat a.txt')).toEqual(['one']);
  });

  it('is not asked for by a copy, which takes a whole template', async () => {
    const templates = createTemplateStore();
    const started = await start('git-layers', templates, { layer: 'copy' });
    expect(started.medium).not.toBe('overlay');
    expect(await sh(started, 'cat build/later.out; test -e build/gone.out || echo gone')).toEqual([
      'later',
      'gone',
    ]);
  });
});

describe('the layer stack', () => {
  it('reads each layer’s work tree, a missing one, and an end of the stack (a whiteout, a file)', async () => {
    const root = await mkdtemp(join(tmpdir(), 'proctor-layers-'));
    onCleanup(() => rm(root, { recursive: true, force: true }));
    await mkdir(join(root, 'tree/diff/opt/repo'), { recursive: true });
    await mkdir(join(root, 'absent/diff/opt'), { recursive: true });
    await mkdir(join(root, 'file/diff/opt'), { recursive: true });
    await writeFile(join(root, 'file/diff/opt/repo'), 'not a folder');
    await mkdir(join(root, 'link/diff/opt'), { recursive: true });
    await symlink('/etc', join(root, 'link/diff/opt/repo'));
    const parts = ['opt', 'repo'];
    expect(await layerState(join(root, 'tree/diff'), parts)).toBe('tree');
    expect(await layerState(join(root, 'absent/diff'), parts)).toBe('absent');
    expect(await layerState(join(root, 'file/diff'), parts)).toBe('ends');
    expect(await layerState(join(root, 'link/diff'), parts)).toBe('ends');
    // A whiteout of the folder above the tree: a character device 0/0 (mknod needs root).
    await mkdir(join(root, 'whiteout/diff'), { recursive: true });
    const made = await promisify(execFile)('mknod', [
      join(root, 'whiteout/diff/opt'),
      'c',
      '0',
      '0',
    ])
      .then(() => true)
      .catch(() => false);
    if (made) expect(await layerState(join(root, 'whiteout/diff'), parts)).toBe('ends');
    // A folder this process may not read is an error, not an absent layer.
    if (process.getuid?.() !== 0) {
      await chmod(join(root, 'tree/diff/opt'), 0o000);
      await expect(layerState(join(root, 'tree/diff'), parts)).rejects.toThrow();
    }
  });

  it('stacks the layers that hold the tree, top first, down to one that ends it; refuses layers it cannot see', async () => {
    const root = await mkdtemp(join(tmpdir(), 'proctor-stack-'));
    onCleanup(() => rm(root, { recursive: true, force: true }));
    for (const layer of ['top', 'middle', 'bottom']) {
      await mkdir(join(root, layer, 'diff/repo'), { recursive: true });
    }
    await mkdir(join(root, 'none/diff'), { recursive: true });
    await mkdir(join(root, 'file/diff'), { recursive: true });
    await writeFile(join(root, 'file/diff/repo'), 'the tree was replaced by a file here');
    const dir = (layer: string) => join(root, layer, 'diff');
    expect(
      await stackOfLayers(['top', 'none', 'middle', 'file', 'bottom'].map(dir), ['repo']),
    ).toEqual({ lowers: `${dir('top')}/repo:${dir('middle')}/repo` });
    // A stack read before is kept while its folders are there; one that went is read again.
    expect(await lowersPresent(`${dir('top')}/repo:${dir('middle')}/repo`)).toBe(true);
    expect(await lowersPresent(`${dir('top')}/repo:${join(root, 'gone/diff')}/repo`)).toBe(false);
    expect(await stackOfLayers(['none'].map(dir), ['repo'])).toEqual({
      refused: 'no layer of the image holds /repo',
    });
    // A layer's own folder that is not here: the engine keeps its storage elsewhere.
    const elsewhere = await stackOfLayers([dir('top'), join(root, 'gone/diff')], ['repo']);
    expect('refused' in elsewhere && elsewhere.refused).toMatch(
      /^the engine's image layers cannot be read here \(.*ENOENT/,
    );
    // More layers than one mount's options can name.
    const many = Array.from({ length: Math.ceil(MAX_LOWERS_LENGTH / dir('top').length) + 1 }, () =>
      dir('top'),
    );
    expect(await stackOfLayers(many, ['repo'])).toEqual({
      refused: expect.stringMatching(/too many for one overlay mount/) as string,
    });
  });

  it('is refused, with the reason, for a path no layer can name and an image the engine lacks', async () => {
    const image = await fixtureImage('git-layers');
    expect(await layerStack(docker, image, '/')).toEqual({
      refused: expect.stringMatching(/cannot name a layer/) as string,
    });
    expect(await layerStack(docker, image, '/repo/../etc')).toEqual({
      refused: expect.stringMatching(/cannot name a layer/) as string,
    });
    expect(await layerStack(docker, image, '/nowhere')).toEqual({
      refused: 'no layer of the image holds /nowhere',
    });
    expect(await layerStack(docker, `sha256:${'0'.repeat(64)}`, '/repo')).toEqual({
      refused: expect.stringMatching(/is not on the engine/) as string,
    });
    const stack = await layerStack(docker, image, '/repo');
    expect('lowers' in stack && stack.lowers.split(':').length).toBeGreaterThanOrEqual(3);
  });
});

describe('an evaluator’s layered template', () => {
  it('is its image’s when an evaluator’s: every home takes the one made, a home’s prune keeps it, and it goes with its image', async () => {
    // An image of its own (the fixture's layers, another id), so that it can go.
    const tag = `proctor-test-image-template:${randomBytes(4).toString('hex')}`;
    const fixture = await fixtureImage('git-layers');
    const built = promisify(execFile)('docker', [
      'build',
      '-q',
      '--label',
      `t=${tag}`,
      '-t',
      tag,
      '-',
    ]);
    built.child.stdin?.end(`FROM ${fixture}\n`);
    const image = (await built).stdout.trim();
    onCleanup(() =>
      docker
        .getImage(tag)
        .remove({ force: true })
        .catch(() => undefined),
    );
    const base = await readFromImage(image, '/base_commit');
    const [a, b] = [owner(), owner()];
    expect(a?.home).not.toBe(b?.home);
    const spec = (o: typeof a) => ({ ...repoSpec(o, image, base, 'none'), layered: true });
    const first = await createTemplateStore().acquire(docker, spec(a));
    onCleanup(async () => void (await removeTemplate(docker, first.volume)));
    expect(first.lowers).toBeDefined();
    expect(first.preparedMs).toBeGreaterThan(0);
    const labels = (await docker.getVolume(first.volume).inspect()).Labels;
    expect(labels).toMatchObject({ [LABEL.templateScope]: 'image' });
    expect(labels?.[LABEL.home]).toBeUndefined();
    // Another home, another process's store: the same template, nothing prepared.
    const second = await createTemplateStore().acquire(docker, spec(b));
    expect(second).toMatchObject({ volume: first.volume, key: first.key, preparedMs: 0 });
    // A home's solver (history `full`) still gets a template of its own home.
    const solver = await createTemplateStore().acquire(docker, { ...spec(a), history: 'full' });
    onCleanup(async () => void (await removeTemplate(docker, solver.volume)));
    expect(solver.volume).not.toBe(first.volume);
    expect((await docker.getVolume(solver.volume).inspect()).Labels).toMatchObject({
      [LABEL.home]: a.home,
    });
    // A home's prune (as `proctor prune` runs it, the images' templates judged too) keeps it,
    // and says why.
    const pruned = await pruneTemplates(docker, a.home, 0, { images: true });
    expect(pruned.templates.find((t) => t.name === first.volume)).toMatchObject({
      action: 'kept',
      reason: 'image-kept',
      home: '',
    });
    expect(pruned.removed).toEqual([solver.volume]);
    expect((await listImageTemplates(docker)).map((t) => t.name)).toContain(first.volume);
    // Its image gone, the reaper of any home removes it.
    await docker.getImage(tag).remove({ force: true });
    expect(await reapTemplates(docker, b.home)).toContain(first.volume);
    expect((await listImageTemplates(docker)).map((t) => t.name)).not.toContain(first.volume);
  });

  it('is made again where a crash left its image’s template half-made, and the half-made one goes', async () => {
    const image = await fixtureImage('git-layers');
    const spec = {
      ...repoSpec(owner(), image, await readFromImage(image, '/base_commit'), 'none'),
      layered: true,
    };
    const stack = await layerStack(docker, image, '/repo');
    if (!('lowers' in stack)) throw new Error(stack.refused);
    const key = templateKey(spec, stack.lowers);
    // What a preparation killed before its `ready` leaves: the volume alone.
    const half = `proctor-template-${key.slice(0, 16)}-halfmade`;
    await docker.createVolume({
      Name: half,
      Labels: {
        [LABEL.templateScope]: 'image',
        [LABEL.role]: 'template',
        [LABEL.template]: key,
        [LABEL.templateImage]: image,
        [LABEL.templateLayout]: TEMPLATE_LAYOUT,
      },
    });
    onCleanup(async () => void (await removeTemplate(docker, half)));
    // Two minutes on, it is older than HALF_MADE_AGE_MS.
    const later = () => Date.now() + 2 * HALF_MADE_AGE_MS;
    const made = await createTemplateStore({ now: later }).acquire(docker, spec);
    onCleanup(async () => void (await removeTemplate(docker, made.volume)));
    expect(made.volume).not.toBe(half);
    expect(made.key).toBe(key);
    const names = (await listImageTemplates(docker)).map((t) => t.name);
    expect(names).toContain(made.volume);
    expect(names).not.toContain(half);
  });
});
