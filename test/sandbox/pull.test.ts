// Pulling a digest-pinned image when a job first needs it, through a real registry on
// 127.0.0.1: progress as it goes (bytes, rate, ETA), a process's pull limit, and failures in one
// line: a manifest the registry lacks is the bundle's (IMAGE_INVALID), a registry that cannot
// be reached, refuses us or throttles us is the machine's (DOCKER_ERROR, retried), never a
// verdict on a candidate.
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import PQueue from 'p-queue';
import { describe, expect, it } from 'vitest';
import { ProctorError } from '../../src/errors.js';
import { resolveImage } from '../../src/sandbox/image.js';
import {
  createPullTracker,
  formatPullProgress,
  type PullProgress,
} from '../../src/pull-progress.js';
import { testDocker } from '../helpers/docker.js';
import { dockerCli, pushImage, startRefusingRegistry, startRegistry } from '../helpers/registry.js';
import { onCleanup, tempDir } from '../helpers/temp.js';

const docker = testDocker();

/** An image of one random 3 MB layer, in the registry only (the engine does not hold it). */
async function registryOnlyImage(host: string): Promise<string> {
  const dir = tempDir('proctor-pull-');
  writeFileSync(join(dir, 'blob'), randomBytes(3 * 1024 * 1024));
  writeFileSync(join(dir, 'Dockerfile'), 'FROM scratch\nCOPY blob /blob\n');
  const local = `proctor-test-pull:${randomBytes(4).toString('hex')}`;
  await dockerCli('build', '-q', '-t', local, dir);
  const target = `${host}/pull-${randomBytes(3).toString('hex')}:v1`;
  const digest = await pushImage(local, target);
  await dockerCli('rmi', local, target);
  onCleanup(async () => {
    await dockerCli('rmi', `${target.slice(0, target.lastIndexOf(':'))}@${digest}`).catch(
      () => undefined,
    );
  });
  return `${target}@${digest}`;
}

async function failure(promise: Promise<unknown>): Promise<ProctorError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ProctorError);
  expect((error as Error).message).not.toContain('\n');
  return error as ProctorError;
}

describe('pulling a pinned image', { timeout: 180_000 }, () => {
  it('pulls it once through the pull limit, telling its bytes, rate and ETA as it goes', async () => {
    const { host } = await startRegistry();
    const reference = await registryOnlyImage(host);
    const seen: PullProgress[] = [];
    const limit = new PQueue({ concurrency: 1 });
    let limited = 0;
    const options = {
      pullLimit: <T>(pull: () => Promise<T>) => {
        limited += 1;
        return limit.add<T>(pull);
      },
      onPullProgress: (p: PullProgress) => seen.push(p),
    };
    const [a, b] = await Promise.all([
      resolveImage(docker, { kind: 'image', reference }, options),
      resolveImage(docker, { kind: 'image', reference }, options),
    ]);
    expect(a.localId).toBe(b.localId);
    expect(a.identity).toEqual({
      portable: true,
      digest: reference.slice(reference.indexOf('@') + 1),
      reference,
    });
    expect(limited).toBe(2);
    // The second waited for room, found the image, and pulled nothing.
    const last = seen.at(-1);
    expect(seen.every((p) => p.image === reference.replace(/:v1@/, '@'))).toBe(true);
    expect(last?.totalBytes).toBeGreaterThan(3_000_000);
    expect(last?.bytes).toBe(last?.totalBytes);
    expect(last?.layersDone).toBe(last?.layers);
    expect(last?.etaSeconds).toBe(0);
    // Present now: no pull, no room asked for.
    await resolveImage(docker, { kind: 'image', reference }, options);
    expect(limited).toBe(2);
  });

  it('names a manifest the registry lacks (the bundle is wrong) and a registry it cannot reach (retried)', async () => {
    const { host } = await startRegistry();
    const missing = `${host}/nothing-${randomBytes(3).toString('hex')}:v1@sha256:${'a'.repeat(64)}`;
    const lacks = await failure(resolveImage(docker, { kind: 'image', reference: missing }));
    expect(lacks.code).toBe('IMAGE_INVALID');
    expect(lacks.message).toContain(`image ${missing}: the registry has no manifest sha256:`);
    const down = `127.0.0.1:9/none:v1@sha256:${'b'.repeat(64)}`;
    const unreachable = await failure(resolveImage(docker, { kind: 'image', reference: down }));
    expect(unreachable.code).toBe('DOCKER_ERROR');
    expect(unreachable.retryable).toBe(true);
    expect(unreachable.message).toMatch(
      /^pulling 127\.0\.0\.1:9\/none@sha256:b{64}: the registry cannot be reached: .*connection refused/,
    );
  });
});

describe('a registry that refuses a pull', { timeout: 120_000 }, () => {
  const pinned = (host: string) => `${host}/private@sha256:${'d'.repeat(64)}`;

  it.each([
    ['login', /the registry refused: .*no basic auth credentials$/],
    ['denied', /the registry refused: denied$/],
    [
      'rate-limited',
      /the registry is rate-limiting: toomanyrequests: You have reached your pull rate limit\.$/,
    ],
  ] as const)(
    "says so in one line when it wants a %s, as the machine's error (retried), not the bundle's",
    async (refusal, said) => {
      const { host } = await startRefusingRegistry(refusal);
      const reference = `${host}/private:v1@sha256:${'d'.repeat(64)}`;
      const refused = await failure(resolveImage(docker, { kind: 'image', reference }));
      expect(refused.code).toBe('DOCKER_ERROR');
      expect(refused.retryable).toBe(true);
      expect(refused.message.startsWith(`pulling ${pinned(host)}: `)).toBe(true);
      expect(refused.message).toMatch(said);
    },
  );
});

describe('pull progress', () => {
  it('adds each layer as its download goes, counts present layers as done, and gives rate and ETA', () => {
    let now = 1_000;
    const t = createPullTracker('r/x@sha256:1', () => now);
    t.event({ status: 'Pulling from r/x', id: 'v1' });
    t.event({ status: 'Pulling fs layer', id: 'a' });
    t.event({ status: 'Already exists', id: 'b' });
    now += 2_000;
    t.event({
      status: 'Downloading',
      id: 'a',
      progressDetail: { current: 1_000_000, total: 4_000_000 },
    });
    t.event({ status: 'Digest: sha256:1' });
    expect(t.snapshot()).toMatchObject({
      bytes: 1_000_000,
      totalBytes: 4_000_000,
      layers: 2,
      layersDone: 1,
      bytesPerSecond: 500_000,
      etaSeconds: 6,
    });
    expect(formatPullProgress(t.snapshot())).toBe(
      '1.0 MB of 4.0 MB, 0.5 MB/s, ETA 6s (layers 1/2)',
    );
    t.event({ status: 'Download complete', id: 'a' });
    expect(t.snapshot()).toMatchObject({ bytes: 4_000_000, etaSeconds: 0, layersDone: 2 });
  });

  it('knows no rate before a second has passed, nor a total before a download starts', () => {
    const t = createPullTracker('r/x@sha256:1', () => 5);
    t.event({ status: 'Pulling fs layer', id: 'a' });
    expect(t.snapshot()).toMatchObject({
      bytes: 0,
      totalBytes: null,
      bytesPerSecond: null,
      etaSeconds: null,
    });
    expect(formatPullProgress(t.snapshot())).toBe('0.0 MB, ? MB/s, ETA ? (layers 0/1)');
  });
});
