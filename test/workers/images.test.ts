// The worker's image cache against the real engine: a Dockerfile image is built once, found
// again by a later cache (a later process) from the stat record without reading the context or
// building, and rebuilt when the context's bytes change; a change of stat alone costs a hash,
// not a build. A home with no record takes an image its engine holds that is labelled with
// the context's hash (another home's build, or an image moved in by docker save | load), and a
// Dockerfile cannot claim another context's label.
import { randomUUID } from 'node:crypto';
import {
  chmodSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { contextEntry, contextListing } from '../../src/sandbox/context-cache.js';
import { LABEL } from '../../src/sandbox/index.js';
import { createImageCache, type ImageBundle } from '../../src/workers/images.js';
import { testDocker } from '../helpers/docker.js';
import { dockerCli } from '../helpers/registry.js';
import { onCleanup, tempDir } from '../helpers/temp.js';

const docker = testDocker();
const SLOW = 120_000;

/** A bundle's environment in a temp dir, whose image is unique to this test and removed after. */
function setup() {
  const root = tempDir();
  const contextDir = join(root, 'environment');
  mkdirSync(contextDir);
  writeFileSync(join(contextDir, 'Dockerfile'), 'FROM scratch\nCOPY marker /marker\n');
  writeFileSync(join(contextDir, 'marker'), randomUUID());
  const bundle: ImageBundle = {
    id: 'images-test',
    contentHash: '0'.repeat(64),
    environment: { kind: 'dockerfile', contextDir, dockerfile: 'Dockerfile' },
  };
  const hashed: string[] = [];
  const built = new Set<string>();
  onCleanup(async () => {
    for (const id of built) await dockerCli('rmi', '-f', id).catch(() => undefined);
  });
  // Past the racy-clean window: as if the job came 10 s after the context was written.
  const cache = () =>
    createImageCache(docker, {
      dir: join(root, 'cache'),
      now: () => Date.now() + 10_000,
      onHash: (dir) => hashed.push(dir),
    });
  const resolve = async (images = cache()) => {
    const image = await images.resolve(bundle);
    built.add(image.localId);
    return image;
  };
  return { root, bundle, built, contextDir, hashed, cache, resolve };
}

/** A caller's listing of a flat context (as a bundle load takes it), past the racy window. */
const listingOf = (contextDir: string) =>
  contextListing(
    contextDir,
    Date.now() + 10_000,
    readdirSync(contextDir).map((name) =>
      contextEntry(name, lstatSync(join(contextDir, name), { bigint: true })),
    ),
  );

const labelsOf = async (id: string) => (await docker.getImage(id).inspect()).Config.Labels ?? {};

describe('the image cache', () => {
  it(
    'takes an unchanged context’s image from the record in a later process: no hash, no build',
    async () => {
      const { hashed, resolve } = setup();
      const first = await resolve();
      expect(first.buildLog).toBeDefined();
      const second = await resolve();
      expect(second.localId).toBe(first.localId);
      expect(second.identity).toEqual({
        portable: false,
        kind: 'local_build',
        imageId: first.localId,
      });
      expect(second.buildLog).toBeUndefined();
      expect(hashed).toHaveLength(1);
    },
    SLOW,
  );

  it(
    'rebuilds when a file’s bytes change, and builds once more for an added or removed file',
    async () => {
      const { contextDir, hashed, resolve } = setup();
      const first = await resolve();
      writeFileSync(join(contextDir, 'marker'), randomUUID());
      const changed = await resolve();
      expect(changed.buildLog).toBeDefined();
      expect(changed.localId).not.toBe(first.localId);
      writeFileSync(join(contextDir, 'added'), 'x');
      expect((await resolve()).buildLog).toBeDefined();
      unlinkSync(join(contextDir, 'added'));
      // Back to the bytes of `changed`: hashed again, and its recorded image is current.
      const removed = await resolve();
      expect([removed.localId, removed.buildLog]).toEqual([changed.localId, undefined]);
      chmodSync(join(contextDir, 'marker'), 0o600);
      expect((await resolve()).buildLog).toBeDefined();
      expect(hashed).toHaveLength(5);
    },
    SLOW,
  );

  it(
    'goes by the listing it is handed: no hash when it matches the record, a build on new bytes',
    async () => {
      const { bundle, built, contextDir, hashed, cache, resolve } = setup();
      const first = await resolve();
      const before = listingOf(contextDir);
      const again = await cache().resolve(bundle, undefined, before);
      expect([again.localId, again.buildLog]).toEqual([first.localId, undefined]);
      expect(hashed).toHaveLength(1);
      writeFileSync(join(contextDir, 'marker'), randomUUID());
      // Not listed again: the listing taken before the change still answers for the folder.
      expect((await cache().resolve(bundle, undefined, before)).localId).toBe(first.localId);
      const changed = await cache().resolve(bundle, undefined, listingOf(contextDir));
      built.add(changed.localId);
      expect(changed.buildLog).toBeDefined();
      expect(changed.localId).not.toBe(first.localId);
      expect(hashed).toHaveLength(2);
    },
    SLOW,
  );

  it(
    'hashes again but does not rebuild when only the stat changed (touch)',
    async () => {
      const { contextDir, hashed, resolve } = setup();
      const first = await resolve();
      utimesSync(join(contextDir, 'marker'), 1_500_000_000, 1_500_000_000);
      const touched = await resolve();
      expect([touched.localId, touched.buildLog]).toEqual([first.localId, undefined]);
      expect(hashed).toHaveLength(2);
    },
    SLOW,
  );

  it(
    'builds again when the recorded image was removed behind its back',
    async () => {
      const { resolve } = setup();
      const first = await resolve();
      await dockerCli('rmi', '-f', first.localId);
      const again = await resolve();
      expect(again.buildLog).toBeDefined();
      // The rebuilt image (a new id: its creation time differs) is the one now recorded.
      const third = await resolve();
      expect([third.localId, third.buildLog]).toEqual([again.localId, undefined]);
    },
    SLOW,
  );

  it(
    'takes an image labelled with the context from the engine in a home with no record: no build',
    async () => {
      const { root, bundle, hashed, resolve } = setup();
      const first = await resolve();
      const labels = await labelsOf(first.localId);
      expect(labels[LABEL.context]).toMatch(/^[0-9a-f]{64}$/);
      expect(labels[LABEL.dockerfile]).toBe('Dockerfile');
      // Another home: an empty record folder, so only the engine's labels can vouch.
      const other = createImageCache(docker, {
        dir: join(root, 'other-home-cache'),
        now: () => Date.now() + 10_000,
        onHash: (dir) => hashed.push(dir),
      });
      const found = await other.resolve(bundle);
      expect([found.localId, found.buildLog]).toEqual([first.localId, undefined]);
      expect(found.identity).toEqual({
        portable: false,
        kind: 'local_build',
        imageId: first.localId,
      });
      // And it is now this home's record too.
      const again = createImageCache(docker, { dir: join(root, 'other-home-cache') });
      expect((await again.resolve(bundle)).localId).toBe(first.localId);
    },
    SLOW,
  );

  it(
    'tags an image the label query found with the task’s tag, which follows the environment, not the tests',
    async () => {
      const { root, bundle, resolve } = setup();
      const first = await resolve();
      const tagsOf = async () => (await docker.getImage(first.localId).inspect()).RepoTags ?? [];
      const own = (await tagsOf()).filter((t) => t.startsWith('proctor-task:images-test-'));
      expect(own).toHaveLength(1);
      const suffix = own[0]!.slice('proctor-task:images-test-'.length);
      expect(suffix).toMatch(/^[0-9a-f]{12}$/);
      // The same environment under another id, with other tests: found by its labels in a home
      // with no record, not built, and tagged for the next lookup with the same suffix.
      const copy: ImageBundle = { ...bundle, id: 'images-test-copy', contentHash: '1'.repeat(64) };
      const other = createImageCache(docker, { dir: join(root, 'copy-home-cache') });
      const found = await other.resolve(copy);
      expect([found.localId, found.buildLog]).toEqual([first.localId, undefined]);
      expect(await tagsOf()).toContain(`proctor-task:images-test-copy-${suffix}`);
      // The first bundle with changed tests keeps the tag its image has.
      const edited: ImageBundle = { ...bundle, contentHash: '2'.repeat(64) };
      const third = createImageCache(docker, { dir: join(root, 'edited-home-cache') });
      expect((await third.resolve(edited)).localId).toBe(first.localId);
      expect((await tagsOf()).filter((t) => t.startsWith('proctor-task:images-test-'))).toEqual(
        expect.arrayContaining([...own, `proctor-task:images-test-copy-${suffix}`]),
      );
      expect(await tagsOf()).toHaveLength(2);
    },
    SLOW,
  );

  it(
    'a Dockerfile’s own LABEL cannot claim another context: the build’s labels win',
    async () => {
      const victim = setup();
      const first = await victim.resolve();
      const hash = (await labelsOf(first.localId))[LABEL.context] as string;
      // A second context whose Dockerfile claims the first one's hash and Dockerfile.
      const attacker = setup();
      writeFileSync(
        join(attacker.contextDir, 'Dockerfile'),
        `FROM scratch\nLABEL ${LABEL.context}=${hash} ${LABEL.dockerfile}=Dockerfile\nCOPY marker /marker\n`,
      );
      const claimed = await attacker.resolve();
      expect(claimed.localId).not.toBe(first.localId);
      const labels = await labelsOf(claimed.localId);
      expect(labels[LABEL.context]).toMatch(/^[0-9a-f]{64}$/);
      expect(labels[LABEL.context]).not.toBe(hash);
      await dockerCli('rmi', '-f', first.localId);
      // The first context, in a home with no record and its image gone: built, not taken.
      const fresh = createImageCache(docker, { dir: join(victim.root, 'fresh-cache') });
      const rebuilt = await fresh.resolve(victim.bundle);
      victim.built.add(rebuilt.localId);
      expect(rebuilt.buildLog).toBeDefined();
      expect(rebuilt.localId).not.toBe(claimed.localId);
    },
    SLOW,
  );

  it(
    'stops a build at `[images] timeout_minutes` (as ms) and says where that limit is set',
    async () => {
      const { root, bundle, contextDir } = setup();
      writeFileSync(
        join(contextDir, 'Dockerfile'),
        `FROM debian:bookworm-slim\nRUN sleep 120 # ${randomUUID()}\n`,
      );
      const images = createImageCache(docker, { dir: join(root, 'cache') }, { timeoutMs: 1_500 });
      const started = Date.now();
      await expect(images.resolve(bundle)).rejects.toMatchObject({
        code: 'DOCKER_ERROR',
        message: expect.stringContaining(
          'timed out after 1500 ms (`[images] timeout_minutes` in proctor.toml sets the limit)',
        ),
      });
      expect(Date.now() - started).toBeLessThan(60_000);
    },
    SLOW,
  );
});
