// The real Docker engine for tests: a client that fails loudly when no engine answers,
// fixture images built once (and cached by the engine), and label-based cleanup so that no
// test leaves a container or volume behind: per test (testOwner) and per file (dockerScope).
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, expect } from 'vitest';
import { createDockerClient, isNotFound, type DockerClient } from '../../src/sandbox/docker.js';
import { removeOwned } from '../../src/sandbox/cleanup.js';
import { pruneTemplates } from '../../src/sandbox/template-prune.js';
import { createWorkspace } from '../../src/sandbox/workspace.js';
import { LABEL, type Owner } from '../../src/sandbox/labels.js';
import { buildFixture, FIXTURES_ROOT } from './fixture-images.js';
import { onCleanup } from './temp.js';

const run = promisify(execFile);

export function testDocker(): DockerClient {
  return createDockerClient(process.env['DOCKER_HOST']);
}

/**
 * The Proctor home of testOwner's owners by default, shared by the files that use it. A real
 * folder, as every home under it: the reaper of any worker on this host removes the workspace
 * templates of homes whose folder is gone (template-prune.ts), so a home that does not exist
 * would lose its templates to another test file's worker in the middle of a test.
 */
const SHARED_HOME = join(tmpdir(), 'proctor-tests');
mkdirSync(SHARED_HOME, { recursive: true });

/** A fresh owner for one test; everything it labels is removed after the test. */
export function testOwner(docker: DockerClient, prefix = 'test', home = SHARED_HOME): Owner {
  const owner = { job: `${prefix}-${randomBytes(4).toString('hex')}`, attempt: 1, home };
  onCleanup(async () => {
    await removeOwned(docker, owner);
  });
  return owner;
}

/**
 * Where one test file's containers and volumes live, apart from every other file's: a home of
 * its own (not testOwner's shared one, which test/sandbox/cleanup.test.ts reaps while other
 * files run, evaluations in flight included) and a job prefix with a random part (which keeps
 * a concurrent run of the same file apart).
 */
export interface DockerScope {
  /** Every owner's job name starts with `<prefix>-`. */
  readonly prefix: string;
  readonly home: string;
  /** A fresh owner in this scope; everything it labels is removed after the test. */
  owner(): Owner;
  /**
   * A fresh owner in a home of its own under the scope's, whose workspace templates are pruned
   * after the test (templates are per home, and carry no job label).
   */
  templateOwner(): Owner;
}

/**
 * The Docker scope of the calling test file (call it at the top level of the file). After the
 * file, everything labelled with the scope is removed, and the file fails if anything was:
 * each test must remove what it made.
 */
export function dockerScope(docker: DockerClient, name: string): DockerScope {
  const scope = {
    prefix: `${name}-${randomBytes(3).toString('hex')}`,
    home: `${SHARED_HOME}/${name}`,
    owner: () => testOwner(docker, scope.prefix, scope.home),
    templateOwner: () => {
      const home = `${scope.home}/${randomBytes(4).toString('hex')}`;
      mkdirSync(home, { recursive: true });
      // After the prune below (cleanups run last first): the folder outlives its templates.
      onCleanup(() => rmSync(home, { recursive: true, force: true }));
      const owner = testOwner(docker, scope.prefix, home);
      onCleanup(async () => {
        await pruneTemplates(docker, owner.home);
      });
      return owner;
    },
  };
  mkdirSync(scope.home, { recursive: true });
  afterAll(async () => {
    expect(await removeScope(docker, scope)).toEqual([]);
  });
  return scope;
}

/** Removes the containers, then the volumes, labelled with the scope; their names. */
async function removeScope(
  docker: DockerClient,
  scope: Pick<DockerScope, 'prefix' | 'home'>,
): Promise<string[]> {
  const filters = { label: [`${LABEL.home}=${scope.home}`] };
  const mine = (labels: Record<string, string> | null | undefined) =>
    labels?.[LABEL.job]?.startsWith(`${scope.prefix}-`) ?? false;
  const ignoreGone = (error: unknown) => {
    if (!isNotFound(error)) throw error;
  };
  const names: string[] = [];
  const containers = await docker.listContainers({ all: true, filters });
  for (const c of containers.filter((c) => mine(c.Labels))) {
    names.push(c.Names.join(','));
    await docker.getContainer(c.Id).remove({ force: true }).catch(ignoreGone);
  }
  const { Volumes: volumes } = await docker.listVolumes({ filters });
  for (const v of (volumes ?? []).filter((v) => mine(v.Labels))) {
    names.push(v.Name);
    await docker.getVolume(v.Name).remove({ force: true }).catch(ignoreGone);
  }
  return names;
}

const built = new Map<string, Promise<string>>();

/**
 * Builds test/fixtures/images/<name> as proctor-test-<name>; returns its image id. The global
 * set-up has built every fixture before the tests, so this is a cache hit unless the file's
 * Dockerfile changed since.
 */
export function fixtureImage(name: string): Promise<string> {
  let pending = built.get(name);
  if (!pending) {
    pending = buildFixture({ name, dir: join(FIXTURES_ROOT, name) }, { log: () => undefined }).then(
      (build) => build.imageId,
    );
    built.set(name, pending);
  }
  return pending;
}

/** Reads a file from an image (fixture metadata such as /base_commit). */
export async function readFromImage(image: string, path: string): Promise<string> {
  const { stdout } = await run('docker', ['run', '--rm', '--network', 'none', image, 'cat', path]);
  return stdout.trim();
}

export { run as execFileAsync };

/**
 * The git-history fixture checked out into a fresh solver workspace for one test: its image,
 * base commit, owner (cleaned up after the test) and volume.
 */
export async function fixtureWorkspace(
  docker: DockerClient,
  prefix: string,
  options: { runtime?: string } = {},
) {
  const image = await fixtureImage('git-history');
  const base = await readFromImage(image, '/base_commit');
  const owner = testOwner(docker, prefix);
  const volume = await createWorkspace(docker, {
    owner,
    role: 'solver',
    image,
    repoPath: '/repo',
    baseCommit: base,
    uid: 1000,
    gid: 1000,
    ...options,
  });
  return { image, base, owner, volume };
}
