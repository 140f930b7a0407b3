// Workspace templates on the real engine: what a template holds (the base commit's history,
// or none), that no job's changes reach it or the next job, one preparation for concurrent
// jobs, a half-made template never used, a new template for a changed image, and prune.
import { randomBytes } from 'node:crypto';
import type { ContainerCreateOptions } from 'dockerode';
import { describe, expect, it } from 'vitest';
import type { DockerClient } from '../../src/sandbox/docker.js';
import { runToCompletion } from '../../src/sandbox/run.js';
import { LABEL } from '../../src/sandbox/labels.js';
import {
  createTemplateStore,
  listTemplates,
  preparationName,
  readReady,
  reapTemplates,
  removeStaleLock,
  templateKey,
  TEMPLATE_MOUNT,
  type History,
  type TemplateStore,
} from '../../src/sandbox/template.js';
import { pruneTemplates } from '../../src/sandbox/template-prune.js';
import { createWorkspace } from '../../src/sandbox/workspace.js';
import { startWithWorkspace } from '../../src/sandbox/workspace-start.js';
import { execInContainer } from '../../src/sandbox/exec.js';
import { removeContainer } from '../../src/sandbox/container.js';
import {
  dockerScope,
  execFileAsync,
  fixtureImage,
  readFromImage,
  testDocker,
} from '../helpers/docker.js';
import { repoSpec } from '../helpers/templates.js';
import { onCleanup } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';

const docker = testDocker();
const scope = dockerScope(docker, 'template');

/** An owner in a home of the test's own, whose templates are pruned after the test. */
const owner = () => scope.templateOwner();

async function workspace(
  image: string,
  o: ReturnType<typeof owner>,
  templates: TemplateStore,
  history: History = 'full',
  client: DockerClient = docker,
) {
  const base = await readFromImage(image, '/base_commit');
  const volume = await createWorkspace(client, {
    ...repoSpec(o, image, base, history),
    role: 'solver',
    templates,
  });
  return { base, volume };
}

/** Runs a script as the sandbox user in a workspace; returns its stdout lines. */
async function inWorkspace(
  image: string,
  volume: string,
  o: ReturnType<typeof owner>,
  script: string,
) {
  const result = await runToCompletion(
    docker,
    {
      owner: o,
      role: 'probe',
      image,
      cmd: ['sh', '-c', script],
      uid: 1000,
      gid: 1000,
      workdir: '/workspace',
      workspace: { volume, target: '/workspace' },
      tmpfs: [{ path: '/tmp', sizeMb: 64 }],
      env: { HOME: '/tmp', GIT_CONFIG_NOSYSTEM: '1' },
    },
    { timeoutMs: 60_000 },
  );
  expect(result.stderr).toBe('');
  expect(result.exitCode).toBe(0);
  return result.stdout.trim().split('\n');
}

const SUMMARY = [
  'git rev-parse HEAD',
  'git rev-list --all | wc -l',
  'git count-objects -v | grep -E "^(count|in-pack):" | tr "\\n" " "; echo',
  'git status --porcelain | wc -l',
  'ls -A | tr "\\n" " "; echo',
].join('; ');

/**
 * A preparation lock of a key of its own: its container `docker run` to its end, or only
 * `docker create`d; removed after the test.
 */
async function preparationLock(how: 'run' | 'create'): Promise<{ key: string; name: string }> {
  const image = await fixtureImage('git-history');
  const key = `test-${randomBytes(8).toString('hex')}`;
  const name = preparationName(key);
  await execFileAsync('docker', [how, '--name', name, '--network', 'none', image, 'true']);
  onCleanup(async () => {
    await execFileAsync('docker', ['rm', '-f', name]).catch(() => undefined);
  });
  return { key, name };
}

describe('workspace templates', () => {
  it('hold no history with history none: the base commit alone, its tree and index, no future object', async () => {
    const image = await fixtureImage('git-history');
    const future = await readFromImage(image, '/future_commit');
    const o = owner();
    const { base, volume } = await workspace(image, o, createTemplateStore(), 'none');
    const lines = await inWorkspace(
      image,
      volume,
      o,
      `git rev-parse HEAD; git rev-list --all | wc -l; git status --porcelain | wc -l; git cat-file -e ${future} 2>/dev/null && echo FUTURE || echo no-future; cat a.txt; stat -c %u:%g . .git a.txt`,
    );
    expect(lines).toEqual([
      base,
      '1',
      '0',
      'no-future',
      'one',
      '1000:1000',
      '1000:1000',
      '1000:1000',
    ]);
  });

  it("hold the base commit's whole history with history full, nothing later, and keep a shallow repository shallow", async () => {
    const image = await fixtureImage('git-deep');
    const o = owner();
    const templates = createTemplateStore();
    const base = await readFromImage(image, '/deep_base');
    const future = await readFromImage(image, '/deep_future');
    const boundary = await readFromImage(image, '/shallow_boundary');
    const made = async (repoPath: string) =>
      createWorkspace(docker, {
        ...{ owner: o, role: 'solver', image, repoPath, baseCommit: base, uid: 1000, gid: 1000 },
        ...{ history: 'full', templates },
      });
    const log = [
      'git log --format=%s | paste -sd " " -',
      'git rev-list --all | wc -l',
      `git cat-file -e ${future} 2>/dev/null && echo FUTURE || echo no-future`,
      'git rev-parse --is-shallow-repository',
      'cat .git/shallow 2>/dev/null || echo no-boundary',
      'git fsck --no-dangling 2>&1 | wc -l',
      'git status --porcelain | wc -l',
    ].join('; ');
    const deep = await inWorkspace(image, await made('/deep'), o, log);
    expect(deep).toEqual(['c3 c2 c1', '3', 'no-future', 'false', 'no-boundary', '0', '0']);
    const shallow = await inWorkspace(image, await made('/shallow'), o, log);
    expect(shallow).toEqual(['c3 c2', '2', 'no-future', 'true', boundary, '0', '0']);
  });

  it('drop the volume the engine made again for a preparation whose template was removed under it, and prepare anew', async () => {
    const image = await fixtureImage('git-history');
    const o = owner();
    // Another process's prune takes the new, still empty template volume right before the
    // preparation's container is made: the engine then makes the name again, unlabelled.
    let removed = '';
    const racing = new Proxy(docker, {
      get(target, prop, receiver) {
        if (prop !== 'createContainer') return Reflect.get(target, prop, receiver) as unknown;
        return async (options: ContainerCreateOptions) => {
          const mount = options.HostConfig?.Mounts?.find((m) => m.Target === TEMPLATE_MOUNT);
          if (removed === '' && options.Cmd?.[3] === 'proctor-template' && mount?.Source) {
            removed = mount.Source;
            await target.getVolume(removed).remove();
          }
          return target.createContainer(options);
        };
      },
    });
    const { base, volume } = await workspace(image, o, createTemplateStore(), 'none', racing);
    expect(removed).toMatch(/^proctor-template-/);
    const names = ((await docker.listVolumes()).Volumes ?? []).map((v) => v.Name);
    expect(names).not.toContain(removed);
    const templates = await listTemplates(docker, o.home);
    expect(templates.map((t) => t.name)).toHaveLength(1);
    expect(templates[0]?.name).not.toBe(removed);
    const lines = await inWorkspace(image, volume, o, 'git rev-parse HEAD; cat a.txt');
    expect(lines).toEqual([base, 'one']);
  });

  it('are not taken from another process before they are ready, when its preparation is between its volume and its container', async () => {
    const image = await fixtureImage('git-history');
    const base = await readFromImage(image, '/base_commit');
    const o = owner();
    // The first process (a store of its own) makes its template volume, then is slow to make
    // its preparation container: the lock is not there yet.
    let delayed = false;
    const slow = new Proxy(docker, {
      get(target, prop, receiver) {
        if (prop !== 'createContainer') return Reflect.get(target, prop, receiver) as unknown;
        return async (options: ContainerCreateOptions) => {
          if (!delayed && options.Cmd?.[3] === 'proctor-template') {
            delayed = true;
            await new Promise((resolve) => setTimeout(resolve, 2_000));
          }
          return target.createContainer(options);
        };
      },
    });
    const spec = repoSpec(o, image, base, 'full');
    const first = createTemplateStore().acquire(slow, spec);
    await waitFor(async () => (await listTemplates(docker, o.home)).length === 1, {
      timeoutMs: 30_000,
      what: "the first process's template volume",
    });
    const [template] = await listTemplates(docker, o.home);
    // The second process finds that volume, no lock, and no `ready` file.
    const second = await createTemplateStore().acquire(docker, spec);
    expect(second).toMatchObject({ volume: template?.name, preparedMs: 0 });
    expect(await readReady(docker, o.home, template!)).toMatchObject({ key: second.key });
    expect(await first).toMatchObject({ volume: template?.name });
    expect(delayed).toBe(true);
    expect(await listTemplates(docker, o.home)).toHaveLength(1);
  });

  it('wait for a stale preparation lock whose own process is removing it (the engine answers 409)', async () => {
    // An ended preparation: a container of that name that ran and exited.
    const { key, name } = await preparationLock('run');
    // Its own process removes it (the removal takes 400 ms here) as this call tries to.
    let tried = 0;
    const racing = new Proxy(docker, {
      get(target, prop, receiver) {
        if (prop !== 'getContainer') return Reflect.get(target, prop, receiver) as unknown;
        return (id: string) => {
          const real = target.getContainer(id);
          return new Proxy(real, {
            get(c, p, r) {
              if (p !== 'remove') return Reflect.get(c, p, r) as unknown;
              return () => {
                tried += 1;
                setTimeout(() => void real.remove({ force: true }).catch(() => undefined), 400);
                return Promise.reject(
                  Object.assign(new Error(`removal of container ${id} is already in progress`), {
                    statusCode: 409,
                  }),
                );
              };
            },
          });
        };
      },
    });
    const started = Date.now();
    await removeStaleLock(racing, key);
    expect(tried).toBe(1);
    // It returned once the lock was gone, not at the 409.
    expect(Date.now() - started).toBeGreaterThanOrEqual(350);
    await expect(execFileAsync('docker', ['inspect', name])).rejects.toThrow();
  });

  it('leave a preparation lock its process has just created and not yet started: not stale', async () => {
    // A preparation between its create and its start (seconds apart under load).
    const { key, name } = await preparationLock('create');
    await removeStaleLock(docker, key);
    const { stdout } = await execFileAsync('docker', ['inspect', '-f', '{{.State.Status}}', name]);
    expect(stdout.trim()).toBe('created');
    // Its process starts it: the start the removal would have made fail.
    await execFileAsync('docker', ['start', '-a', name]);
  });

  it('leave the template and the next job unchanged by a solver that rewrites .git, adds objects and fills its workspace', async () => {
    const image = await fixtureImage('git-history');
    const o = owner();
    const templates = createTemplateStore();
    const first = await workspace(image, o, templates);
    const clean = await inWorkspace(image, first.volume, o, SUMMARY);
    await inWorkspace(
      image,
      first.volume,
      o,
      [
        'git -c user.name=x -c user.email=x@x commit -q --allow-empty -m later',
        'echo blob | git hash-object -w --stdin > /dev/null',
        'git tag t1 && git branch other',
        'echo "[core]" >> .git/config && echo hooked > .git/hooks/post-checkout',
        'rm -f a.txt && head -c 4000000 /dev/zero > big.bin && mkdir -p d && touch d/x',
        'chmod -R u+w .git && rm -rf .git/objects/pack',
        'true',
      ].join(' && '),
    );
    const next = await workspace(image, o, templates);
    expect(next.volume).not.toBe(first.volume);
    expect(await inWorkspace(image, next.volume, o, SUMMARY)).toEqual(clean);
    // One template for the two jobs, and it still holds its clean tree.
    const made = await listTemplates(docker, o.home);
    expect(made).toHaveLength(1);
    const fresh = await workspace(image, o, createTemplateStore());
    expect(await inWorkspace(image, fresh.volume, o, SUMMARY)).toEqual(clean);
  });

  it('are mounted read-only into the container that copies them: its task cannot write to the template', async () => {
    const image = await fixtureImage('git-history');
    const o = owner();
    const templates = createTemplateStore();
    const base = await readFromImage(image, '/base_commit');
    const started = await startWithWorkspace(docker, {
      owner: o,
      role: 'solver',
      image,
      repoPath: '/repo',
      baseCommit: base,
      uid: 1000,
      gid: 1000,
      templates,
      container: { workdir: '/repo', env: { HOME: '/tmp' } },
    });
    const result = await execInContainer(docker, started.container.id, {
      cmd: [
        'sh',
        '-c',
        [
          `cd ${TEMPLATE_MOUNT}/tree`,
          'stat -c %u:%g .',
          'touch x 2>/dev/null && echo wrote || echo refused',
          'rm -rf .git 2>/dev/null; test -d .git && echo kept || echo removed',
          'echo later >> /repo/a.txt && git -C /repo rev-parse HEAD',
        ].join('; '),
      ],
      user: '1000:1000',
      timeoutMs: 30_000,
      outputBytes: 4096,
    });
    await removeContainer(started.container);
    expect(result.stdout.trim().split('\n')).toEqual(['1000:1000', 'refused', 'kept', base]);
    const next = await workspace(image, o, templates);
    expect((await inWorkspace(image, next.volume, o, 'git status --porcelain | wc -l'))[0]).toBe(
      '0',
    );
  });

  it('are made once for jobs that need the same missing template at once', async () => {
    const image = await fixtureImage('git-history');
    const o = owner();
    const templates = createTemplateStore();
    const made = await Promise.all([1, 2, 3].map(() => workspace(image, o, templates)));
    expect(new Set(made.map((m) => m.volume)).size).toBe(3);
    expect(await listTemplates(docker, o.home)).toHaveLength(1);
  });

  it('never copy from a half-made template (a crashed preparation), and drop it', async () => {
    const image = await fixtureImage('git-history');
    const o = owner();
    const base = await readFromImage(image, '/base_commit');
    const key = templateKey(repoSpec(o, image, base, 'full'));
    const half = `proctor-template-${key.slice(0, 16)}-crashed`;
    await docker.createVolume({
      Name: half,
      Labels: {
        [LABEL.home]: o.home,
        [LABEL.role]: 'template',
        [LABEL.template]: key,
        [LABEL.templateImage]: image,
      },
    });
    const made = await workspace(image, o, createTemplateStore());
    expect((await inWorkspace(image, made.volume, o, 'git rev-parse HEAD'))[0]).toBe(base);
    const names = (await listTemplates(docker, o.home)).map((t) => t.name);
    expect(names).toHaveLength(1);
    expect(names).not.toContain(half);
  });

  it('are made anew for a changed image, and go with their image', async () => {
    const image = await fixtureImage('git-history');
    const o = owner();
    const tag = `proctor-test-template-${randomBytes(4).toString('hex')}`;
    await execFileAsync('sh', [
      '-c',
      `printf 'FROM %s\\nLABEL proctor.test.changed=${tag}\\n' ${image} | docker build -q -t ${tag} -`,
    ]);
    const { stdout } = await execFileAsync('docker', ['image', 'inspect', '-f', '{{.Id}}', tag]);
    const changed = stdout.trim();
    onCleanup(async () => {
      await execFileAsync('docker', ['rmi', '-f', tag]).catch(() => undefined);
    });
    const templates = createTemplateStore();
    await workspace(image, o, templates);
    await workspace(changed, o, templates);
    const made = await listTemplates(docker, o.home);
    expect(made.map((t) => t.image).sort()).toEqual([image, changed].sort());
    await execFileAsync('docker', ['rmi', '-f', tag]);
    expect(await reapTemplates(docker, o.home)).toHaveLength(1);
    expect((await listTemplates(docker, o.home)).map((t) => t.image)).toEqual([image]);
  });

  it('keep at most `limit`, the least recently used going first', async () => {
    const image = await fixtureImage('git-history');
    const o = owner();
    const templates = createTemplateStore({ limit: 1 });
    await workspace(image, o, templates, 'full');
    await workspace(image, o, templates, 'none');
    const left = await listTemplates(docker, o.home);
    expect(left).toHaveLength(1);
    expect(left[0]?.key).toBe(
      templateKey(repoSpec(o, image, await readFromImage(image, '/base_commit'), 'none')),
    );
    expect(() => createTemplateStore({ limit: 0 })).toThrow(
      'Expected `limit` to be an integer >= 1, got `0`',
    );
  });

  it('are removed by prune, but the ones kept and the ones in use', async () => {
    const image = await fixtureImage('git-history');
    const o = owner();
    await workspace(image, o, createTemplateStore(), 'full');
    await workspace(image, o, createTemplateStore(), 'none');
    expect(await listTemplates(docker, o.home)).toHaveLength(2);
    const kept = await pruneTemplates(docker, o.home, 1);
    expect(kept.removed).toHaveLength(1);
    const [last] = await listTemplates(docker, o.home);
    // A container mounting the template holds it.
    const holder = await docker.createContainer({
      Image: image,
      Cmd: ['true'],
      Labels: { [LABEL.home]: o.home, [LABEL.job]: `${scope.prefix}-holder`, [LABEL.attempt]: '1' },
      HostConfig: {
        Mounts: [{ Type: 'volume', Source: last?.name ?? '', Target: '/t', ReadOnly: true }],
      },
    });
    onCleanup(() => holder.remove({ force: true }).catch(() => undefined));
    const holderName = (await holder.inspect()).Name.replace(/^\//, '');
    const busy = await pruneTemplates(docker, o.home);
    expect(busy).toMatchObject({ removed: [], busy: [last?.name] });
    // Its home's alone: images' templates (every home's) of other tests are listed too.
    expect(busy.templates.filter((t) => t.home === o.home)).toMatchObject([
      { name: last?.name, action: 'kept', reason: 'in-use', container: holderName },
    ]);
    await holder.remove({ force: true });
    expect((await pruneTemplates(docker, o.home)).removed).toEqual([last?.name]);
    expect(await listTemplates(docker, o.home)).toEqual([]);
  });
});
