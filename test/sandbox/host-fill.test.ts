// A job's volumes filled by this process in the engine's folders (host-volumes.ts) against the
// same volumes filled through a loading container (PROCTOR_HOST_FILL=0): the container sees the
// same assets (names, modes, owners, mtimes, bytes), the same workspace root and overlay, for a
// copied and an overlay workspace and a layered template; and only the engine's way creates a
// container for it. A template's `ready` line read on the host is the one the engine's way
// reads, and a template pruned under the reader leaves no volume behind either way.
import { describe, expect, it } from 'vitest';
import { removeContainer } from '../../src/sandbox/container.js';
import { execInContainer } from '../../src/sandbox/exec.js';
import { hostVolumeFolder } from '../../src/sandbox/host-volumes.js';
import { LABEL, type Owner } from '../../src/sandbox/labels.js';
import {
  createTemplateStore,
  listTemplates,
  readReady,
  removeTemplate,
} from '../../src/sandbox/template.js';
import {
  startWithWorkspace,
  type WorkspaceContainer,
  type WorkspaceContainerSpec,
} from '../../src/sandbox/workspace-start.js';
import { dockerScope, fixtureImage, readFromImage, testDocker } from '../helpers/docker.js';
import { onCleanup } from '../helpers/temp.js';

const docker = testDocker();
const scope = dockerScope(docker, 'host-fill');

const ASSETS = [
  { name: 'run', bytes: Buffer.from('#!/bin/sh\necho run\n'), executable: true },
  { name: 'hidden.txt', bytes: Buffer.from('test_a\ntest_b\n'), privateTo: 2000 },
  { name: 'notes.txt', bytes: Buffer.from('plain\n') },
];

const LOOK = [
  'cd /proctor/assets && find . -mindepth 1 -printf "%p %m %U:%G %T@ %s\\n" | sort',
  'sha256sum run notes.txt',
  'find /repo -maxdepth 0 -printf "%U:%G %m\\n"',
  'cd /repo && git -c safe.directory="*" status --porcelain | wc -l',
  'touch /repo/new && echo writable',
].join('; ');

/** A workspace of the git-ignored fixture, removed after the test. */
async function start(
  owner: Owner,
  options: Pick<WorkspaceContainerSpec, 'role'> &
    Partial<Pick<WorkspaceContainerSpec, 'layer' | 'medium' | 'assets'>>,
): Promise<WorkspaceContainer> {
  const image = await fixtureImage('git-ignored');
  const started = await startWithWorkspace(docker, {
    owner,
    image,
    repoPath: '/repo',
    baseCommit: await readFromImage(image, '/base_commit'),
    uid: 1000,
    gid: 1000,
    templates: createTemplateStore(),
    ...options,
    container: { workdir: '/repo', env: { HOME: '/tmp' } },
  });
  onCleanup(() => removeContainer(started.container).catch(() => undefined));
  return started;
}

/** Runs `work` with the fill done `how`. */
async function filled<T>(how: 'host' | 'engine', work: () => Promise<T>): Promise<T> {
  const previous = process.env['PROCTOR_HOST_FILL'];
  if (how === 'engine') process.env['PROCTOR_HOST_FILL'] = '0';
  else delete process.env['PROCTOR_HOST_FILL'];
  try {
    return await work();
  } finally {
    if (previous === undefined) delete process.env['PROCTOR_HOST_FILL'];
    else process.env['PROCTOR_HOST_FILL'] = previous;
  }
}

/** Starts a workspace with assets, the fill done `how`; what the container sees, and the init containers made. */
async function look(how: 'host' | 'engine', layer: 'overlay' | 'copy') {
  return filled(how, async () => {
    const owner = scope.templateOwner();
    const since = Math.floor(Date.now() / 1000) - 1;
    const started = await start(owner, {
      role: 'evaluator',
      layer,
      medium: 'disk',
      assets: { files: ASSETS, target: '/proctor/assets' },
    });
    const result = await execInContainer(docker, started.container.id, {
      cmd: ['sh', '-c', LOOK],
      user: '1000:1000',
      workdir: '/',
      timeoutMs: 60_000,
      outputBytes: 64 * 1024,
    });
    expect(result.stderr).toBe('');
    const until = Math.floor(Date.now() / 1000) + 1;
    const events = await docker.getEvents({
      since,
      until,
      filters: { type: ['container'], event: ['create'], label: [`${LABEL.job}=${owner.job}`] },
    });
    const text = await new Promise<string>((resolve, reject) => {
      let all = '';
      events.on('data', (chunk: Buffer) => (all += chunk.toString()));
      events.on('end', () => resolve(all));
      events.on('error', reject);
    });
    const roles = text
      .split('\n')
      .filter(Boolean)
      .map((line) => {
        const event = JSON.parse(line) as { Actor: { Attributes: Record<string, string> } };
        return event.Actor.Attributes[LABEL.role] ?? '';
      })
      .sort();
    return { seen: result.stdout.trim().split('\n'), medium: started.medium, roles };
  });
}

const EXPECTED = [
  './hidden.txt 400 2000:2000 0.0000000000 14',
  './notes.txt 444 0:0 0.0000000000 6',
  './run 555 0:0 0.0000000000 19',
];

describe('volumes filled on the host', () => {
  it.each(['overlay', 'copy'] as const)(
    'give a %s workspace the same assets, root and tree as the engine’s fill, with no container made for it',
    async (layer) => {
      const host = await look('host', layer);
      const engine = await look('engine', layer);
      expect(host.seen.slice(0, 3)).toEqual(EXPECTED);
      expect(host.seen.slice(5)).toEqual(['1000:1000 755', '0', 'writable']);
      expect(host.seen).toEqual(engine.seen);
      expect([host.medium, engine.medium]).toEqual(
        layer === 'overlay' ? ['overlay', 'overlay'] : ['disk', 'disk'],
      );
      // The template's preparation is an init container either way; the engine's fill adds one
      // loader for the job's volumes (and, for a layered template, one for its folders).
      const init = (roles: string[]) => roles.filter((r) => r === 'init').length;
      expect(init(engine.roles)).toBeGreaterThan(init(host.roles));
    },
  );

  it('read a template’s ready line as the engine does, and leave nothing of a pruned one', async () => {
    const owner = scope.templateOwner();
    const started = await start(owner, { role: 'solver' });
    await removeContainer(started.container);
    const [template] = await listTemplates(docker, owner.home);
    if (template === undefined) throw new Error('no template was made');
    const host = await filled('host', () => readReady(docker, owner.home, template));
    const engine = await filled('engine', () => readReady(docker, owner.home, template));
    expect(host).toEqual({ key: template.key });
    expect(engine).toEqual(host);
    expect(await removeTemplate(docker, template.name)).toBe(true);
    for (const how of ['host', 'engine'] as const) {
      expect(await filled(how, () => readReady(docker, owner.home, template))).toBeUndefined();
      // The engine's checker named the gone volume, which made it again, empty: it went.
      await expect(docker.getVolume(template.name).inspect()).rejects.toMatchObject({
        statusCode: 404,
      });
    }
  });

  it('are refused where the folder is not a new, empty, root-owned one', async () => {
    expect(await hostVolumeFolder(docker, 'proctor-no-such-volume-here')).toBeUndefined();
  });
});
