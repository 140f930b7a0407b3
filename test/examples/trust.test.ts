import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildTrust } from '../../src/config.js';
import { buildDockerfile } from '../../src/sandbox/build.js';
import { requireDocker } from '../../src/sandbox/index.js';
import { testDocker } from '../helpers/docker.js';
import { ROOT } from '../helpers/processes.js';

const docker = testDocker();

/** Every Dockerfile of the shipped examples and of the test fixtures. */
function dockerfiles(): string[] {
  const examples = readdirSync(join(ROOT, 'examples'), { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => join(ROOT, 'examples', e.name, 'environment', 'Dockerfile'));
  const fixtures = readdirSync(join(ROOT, 'test/fixtures/images')).map((name) =>
    join(ROOT, 'test/fixtures/images', name, 'Dockerfile'),
  );
  return [...examples, ...fixtures].filter((file) => existsSync(file));
}

describe('the shipped examples behind a TLS-inspecting proxy', () => {
  it('no Dockerfile turns TLS verification off', () => {
    const files = dockerfiles();
    expect(files.length).toBeGreaterThan(20);
    const off = files.filter((file) =>
      /strict-ssl\s*=?\s*false|--insecure|sslVerify\s*=?\s*false|--trusted-host/i.test(
        readFileSync(file, 'utf8'),
      ),
    );
    expect(off).toEqual([]);
  });

  it("builds the npm example with TLS verified against the host's bundle", async () => {
    await requireDocker(docker);
    const trust = buildTrust({ home: ROOT, build: {} });
    const image = await buildDockerfile(
      docker,
      { contextDir: join(ROOT, 'examples/js-slug-accents/environment'), dockerfile: 'Dockerfile' },
      { trust, timeoutMs: 900_000 },
    );
    // The image is left to the engine's cache, as a task's is: other files build it too.
    expect(image.buildLog).not.toMatch(/SELF_SIGNED_CERT_IN_CHAIN|strict-ssl/);
    const info = await docker.getImage(image.localId).inspect();
    expect(info.Config.Env?.some((e) => e.startsWith('NODE_EXTRA_CA_CERTS='))).toBe(false);
  }, 900_000);
});
