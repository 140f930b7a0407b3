import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { execFileAsync } from './docker.js';
import {
  buildFixtureImages,
  buildOrder,
  fixtureParents,
  imageId,
  listFixtures,
  type FixtureImage,
} from './fixture-images.js';
import { onCleanup, tempDir } from './temp.js';

const fixture = (name: string, needs: string[] = []): FixtureImage => ({ name, dir: name, needs });

/** A fixtures root of its own: one folder a Dockerfile; its images are removed after the test. */
function fixturesRoot(dockerfiles: Record<string, string>): { root: string; prefix: string } {
  const root = tempDir('proctor-fixtures-');
  const prefix = `proctor-test-fixtures-${randomBytes(4).toString('hex')}-`;
  for (const [name, text] of Object.entries(dockerfiles)) {
    mkdirSync(join(root, name));
    writeFileSync(join(root, name, 'Dockerfile'), text.replaceAll('PREFIX-', prefix));
  }
  onCleanup(async () => {
    for (const name of Object.keys(dockerfiles)) {
      await execFileAsync('docker', ['rmi', '-f', `${prefix}${name}:latest`]).catch(
        () => undefined,
      );
    }
  });
  return { root, prefix };
}

describe('fixture images', () => {
  it('reads the fixtures a Dockerfile builds FROM, with or without a tag, platform or stage', () => {
    const text = [
      '# FROM proctor-test-comment',
      'FROM --platform=linux/amd64 proctor-test-go:latest AS toolchain',
      'from proctor-test-git-history',
      'FROM debian:bookworm-slim',
      'COPY --from=toolchain /usr/lib/go /usr/lib/go',
    ].join('\n');
    expect(fixtureParents(text)).toEqual(['go', 'git-history']);
  });

  it('orders every fixture after the ones it builds FROM', () => {
    const order = buildOrder([fixture('c', ['b']), fixture('a'), fixture('b', ['a'])]);
    expect(order.map((f) => f.name)).toEqual(['a', 'b', 'c']);
  });

  it('refuses a parent no folder makes, and a cycle, naming the fixtures', () => {
    expect(() => buildOrder([fixture('a', ['gone'])])).toThrow(
      'fixture image a builds FROM proctor-test-gone, which no fixture folder makes',
    );
    expect(() => buildOrder([fixture('a', ['b']), fixture('b', ['a'])])).toThrow(
      'fixture images build FROM each other in a cycle: a -> b -> a',
    );
  });

  it('lists the repository fixtures: every folder with a Dockerfile, parents known', () => {
    const fixtures = listFixtures();
    expect(fixtures.map((f) => f.name)).toContain('go');
    expect(buildOrder(fixtures)).toHaveLength(fixtures.length);
  });

  it('builds a parent before its child, then finds both cached, with a line for each', async () => {
    const { root, prefix } = fixturesRoot({
      child: 'FROM PREFIX-parent:latest\nRUN cat /parent > /child\n',
      parent: `FROM debian:bookworm-slim\nRUN echo ${randomBytes(4).toString('hex')} > /parent\n`,
    });
    const lines: string[] = [];
    const first = await buildFixtureImages({ root, prefix, log: (line) => lines.push(line) });
    expect(first.map((b) => [b.name, b.cached])).toEqual([
      ['parent', false],
      ['child', false],
    ]);
    expect(lines[0]).toBe('fixture image parent: started');
    expect(lines.indexOf('fixture image child: started')).toBeGreaterThan(
      lines.findIndex((line) => line.startsWith('fixture image parent: built in ')),
    );
    expect(await imageId(`${prefix}child:latest`)).toBe(first[1]?.imageId);

    lines.length = 0;
    const second = await buildFixtureImages({ root, prefix, log: (line) => lines.push(line) });
    expect(second.map((b) => [b.name, b.cached, b.imageId])).toEqual(
      first.map((b) => [b.name, true, b.imageId]),
    );
    expect(lines.filter((line) => / cached \(\d+(\.\d)? s\)$/.test(line))).toHaveLength(2);
  });

  it('fails naming the image and the last line of its build, after the builds in flight', async () => {
    const { root, prefix } = fixturesRoot({
      broken: 'FROM debian:bookworm-slim\nRUN echo "no such tool here" >&2 && exit 3\n',
      fine: 'FROM debian:bookworm-slim\nRUN true\n',
    });
    const lines: string[] = [];
    const error = await buildFixtureImages({ root, prefix, log: (l) => lines.push(l) }).catch(
      (e: unknown) => e as Error,
    );
    expect(error).toBeInstanceOf(Error);
    const message = (error as Error).message;
    expect(message).toMatch(
      new RegExp(
        `^fixture image ${prefix}broken:latest did not build \\(.*broken, IMAGE_INVALID after [\\d.]+ s\\): `,
      ),
    );
    expect(message).toMatch(/returned a non-zero code: 3$/);
    expect(message.includes('\n') || message.includes('\u001b')).toBe(false);
    expect(
      lines.filter(
        (l) => l.startsWith('fixture image broken: | ') && l.endsWith('no such tool here'),
      ),
    ).toHaveLength(1);
    // The other build, started alongside, ran to its end.
    expect(await imageId(`${prefix}fine:latest`)).not.toBeNull();
  });

  it('refuses a concurrency that is not a whole number of builds', async () => {
    await expect(buildFixtureImages({ concurrency: 0 })).rejects.toThrow(
      'Expected `concurrency` to be an integer >= 1, got `0`',
    );
  });
});
