import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { reapOrphans, removeOwned } from '../../src/sandbox/cleanup.js';
import { LABEL, labelsFor, type Owner } from '../../src/sandbox/labels.js';
import { hardenedContainerOptions } from '../../src/sandbox/profile.js';
import { fixtureImage, testDocker, testOwner } from '../helpers/docker.js';

const docker = testDocker();

async function leave(owner: Owner): Promise<{ container: string; volume: string }> {
  const image = await fixtureImage('git-history');
  const volume = `proctor-test-${owner.job}-${owner.attempt}`;
  await docker.createVolume({ Name: volume, Labels: labelsFor(owner, 'solver') });
  const container = await docker.createContainer(
    hardenedContainerOptions({
      owner,
      role: 'solver',
      image,
      cmd: ['sleep', 'infinity'],
      uid: 1000,
      gid: 1000,
      workdir: '/w',
      workspace: { volume, target: '/w' },
    }),
  );
  await container.start();
  return { container: container.id, volume };
}

const exists = async (kind: 'container' | 'volume', id: string) => {
  try {
    await (kind === 'container'
      ? docker.getContainer(id).inspect()
      : docker.getVolume(id).inspect());
    return true;
  } catch {
    return false;
  }
};

describe('cleanup', () => {
  it('removes every running container and volume of one job attempt, and nothing else', async () => {
    const mine = testOwner(docker, 'clean');
    const other = { ...mine, attempt: 2 };
    const a = await leave(mine);
    const b = await leave(other);
    const removed = await removeOwned(docker, mine);
    expect(removed).toEqual({ containers: [a.container], volumes: [a.volume] });
    expect(await exists('container', a.container)).toBe(false);
    expect(await exists('volume', a.volume)).toBe(false);
    expect(await exists('container', b.container)).toBe(true);
    await removeOwned(docker, other);
    expect(await exists('container', b.container)).toBe(false);
  });

  it('reaps what jobs that are not running left behind, in this home only', async () => {
    // A home of this test's own: reaping the shared test home would remove the containers
    // of test files running at the same time.
    const home = `/proctor-tests/cleanup-${randomBytes(4).toString('hex')}`;
    const dead = Object.assign(testOwner(docker, 'dead'), { home });
    const live = Object.assign(testOwner(docker, 'live'), { home });
    const foreign = Object.assign(testOwner(docker, 'foreign'), { home: '/another-home' });
    const d = await leave(dead);
    const l = await leave(live);
    const f = await leave(foreign);
    try {
      const removed = await reapOrphans(docker, dead.home, (job) => job === live.job);
      expect(removed.containers).toContain(d.container);
      expect(removed.volumes).toContain(d.volume);
      expect(await exists('container', d.container)).toBe(false);
      expect(await exists('container', l.container)).toBe(true);
      expect(await exists('container', f.container)).toBe(true);
      const labels = (await docker.getContainer(f.container).inspect()).Config.Labels;
      expect(labels[LABEL.home]).toBe('/another-home');
    } finally {
      await removeOwned(docker, foreign);
    }
  });
});
