// Real workspace templates for the tests of their pruning and reaping: prepared from the
// git-history fixture for a chosen home and host, each removed after the test whatever became
// of its home; and a container that holds one (the engine then refuses to remove it).
import { randomBytes } from 'node:crypto';
import type { DockerClient } from '../../src/sandbox/docker.js';
import { TEMPLATE_MOUNT, createTemplateStore, removeTemplate } from '../../src/sandbox/template.js';
import type { History } from '../../src/sandbox/template.js';
import type { Owner } from '../../src/sandbox/labels.js';
import { fixtureImage, readFromImage } from './docker.js';
import { onCleanup } from './temp.js';

let base: Promise<string> | undefined;

/** A fixture image's repository at /repo, for the sandbox user 1000: a template's spec. */
export function repoSpec(owner: Owner, image: string, baseCommit: string, history: History) {
  return { owner, image, repoPath: '/repo', baseCommit, uid: 1000, gid: 1000, history };
}

/** A ready template of the git-history fixture for `home`, labelled with `host`; its volume. */
export async function makeTemplate(
  docker: DockerClient,
  home: string,
  host: string,
  variant: { history?: History; uid?: number } = {},
): Promise<string> {
  const image = await fixtureImage('git-history');
  base ??= readFromImage(image, '/base_commit');
  const uid = variant.uid ?? 1000;
  const made = await createTemplateStore().acquire(docker, {
    owner: { job: `template-test-${randomBytes(4).toString('hex')}`, attempt: 1, home, host },
    image,
    repoPath: '/repo',
    baseCommit: await base,
    uid,
    gid: uid,
    history: variant.history ?? 'none',
  });
  onCleanup(async () => void (await removeTemplate(docker, made.volume)));
  return made.volume;
}

/** A container (created, never started) that mounts the volume; its name. Removed after the test. */
export async function holdTemplate(docker: DockerClient, volume: string): Promise<string> {
  const name = `proctor-test-holder-${randomBytes(4).toString('hex')}`;
  const holder = await docker.createContainer({
    name,
    Image: await fixtureImage('git-history'),
    Cmd: ['true'],
    HostConfig: { Binds: [`${volume}:${TEMPLATE_MOUNT}:ro`], NetworkMode: 'none' },
  });
  onCleanup(() => holder.remove({ force: true }));
  return name;
}
