// Pinning a tag to its digest without a pull, against a real registry on 127.0.0.1: the digest
// is the one `docker push` printed, the image is not pulled, and a registry that lacks the
// name, or cannot be reached, says so in one line naming the image.
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { ProctorError } from '../../src/errors.js';
import { resolveDigest } from '../../src/sandbox/distribution.js';
import { testDocker } from '../helpers/docker.js';
import { dockerCli, pushImage, startRegistry, type Registry } from '../helpers/registry.js';
import { onCleanup, tempDir } from '../helpers/temp.js';

const docker = testDocker();

/** A one-file image of its own, removed after the test file. */
async function tinyImage(): Promise<string> {
  const dir = tempDir('proctor-tiny-');
  writeFileSync(join(dir, 'x'), randomBytes(16).toString('hex'));
  writeFileSync(join(dir, 'Dockerfile'), 'FROM scratch\nCOPY x /x\n');
  const tag = `proctor-test-tiny:${randomBytes(4).toString('hex')}`;
  await dockerCli('build', '-q', '-t', tag, dir);
  onCleanup(async () => {
    await dockerCli('rmi', tag).catch(() => undefined);
  });
  return tag;
}

async function refusal(name: string): Promise<ProctorError> {
  const error = await resolveDigest(docker, name).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ProctorError);
  expect((error as Error).message).not.toContain('\n');
  return error as ProctorError;
}

describe('resolveDigest', { timeout: 120_000 }, () => {
  let registry: Registry;
  let image: string;
  // A registry per test: it is stopped when the test ends.
  beforeEach(async () => {
    registry = await startRegistry();
    image = await tinyImage();
  });

  it('answers the digest docker push printed, for a tag and for a name without one, and pulls nothing', async () => {
    const repository = `${registry.host}/pin-${randomBytes(3).toString('hex')}`;
    const pushed = await pushImage(image, `${repository}:v1`);
    const latest = await pushImage(image, `${repository}:latest`);
    await dockerCli('rmi', `${repository}:v1`, `${repository}:latest`);
    expect(await resolveDigest(docker, `${repository}:v1`)).toEqual({
      digest: pushed,
      reference: `${repository}:v1@${pushed}`,
    });
    expect((await resolveDigest(docker, repository)).reference).toBe(
      `${repository}:latest@${latest}`,
    );
    const listed = await dockerCli('image', 'ls', '--format', '{{.Repository}}', repository);
    expect(listed.trim()).toBe('');
  });

  it('names the image and the registry answer when it has no such repository or tag', async () => {
    const missing = await refusal(`${registry.host}/nothing-here:v1`);
    expect(missing.code).toBe('IMAGE_INVALID');
    expect(missing.message).toMatch(
      new RegExp(
        `^image ${registry.host}/nothing-here:v1: the registry refused: .*(manifest unknown|not found)`,
      ),
    );
    const repository = `${registry.host}/pin-${randomBytes(3).toString('hex')}`;
    await pushImage(image, `${repository}:v1`);
    await dockerCli('rmi', `${repository}:v1`);
    const tag = await refusal(`${repository}:v2`);
    expect(tag.code).toBe('IMAGE_INVALID');
    expect(tag.message).toContain(`image ${repository}:v2: the registry refused: `);
  });

  it('tells a registry that cannot be reached (retryable) from one that refuses', async () => {
    const down = await refusal('127.0.0.1:9/none:v1');
    expect(down.code).toBe('DOCKER_ERROR');
    expect(down.retryable).toBe(true);
    expect(down.message).toMatch(
      /^image 127\.0\.0\.1:9\/none:v1: the registry cannot be reached: .*connection refused/,
    );
  });

  it('refuses a name Docker cannot hold before asking anyone', async () => {
    const bad = await refusal('Not A Name');
    expect(bad.code).toBe('IMAGE_INVALID');
  });
});
