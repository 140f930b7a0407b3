// Builds the fixture images of test/fixtures/images (one folder an image, tagged
// proctor-test-<name>:latest) for the global set-up, before any test's clock starts: a cold
// build of Go's or Rust's toolchain takes minutes on a loaded machine, longer than a test's
// limit, and a cache hit takes a fraction of a second. Images whose Dockerfile starts FROM
// another fixture wait for it; at most `concurrency` builds run at once. One progress line a
// build on stderr. Built as Proctor builds a task's Dockerfile (src/sandbox/build.ts), with
// the host's CA bundle and proxy settings offered. No vitest APIs here, so that
// global-setup.ts can use it.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { buildTrust } from '../../src/config.js';
import { describeError, ProctorError } from '../../src/errors.js';
import { buildDockerfile } from '../../src/sandbox/build.js';
import type { BuildTrust } from '../../src/sandbox/build-trust.js';
import { createDockerClient, type DockerClient } from '../../src/sandbox/docker.js';

export const FIXTURE_PREFIX = 'proctor-test-';

export interface FixtureImage {
  /** The folder's name under the fixtures root. */
  readonly name: string;
  readonly dir: string;
  /** The names of the fixtures its Dockerfile builds FROM. */
  readonly needs: readonly string[];
}

export interface FixtureBuildOptions {
  /** The folder of fixture folders (default test/fixtures/images). */
  readonly root?: string;
  /** A fixture `<name>` is tagged `<prefix><name>:latest` (default proctor-test-). */
  readonly prefix?: string;
  /** Builds at once (default 2: the machine's other work shares the cores). */
  readonly concurrency?: number;
  /** The limit of one build (default 45 minutes); a cold Go toolchain takes several. */
  readonly buildTimeoutMs?: number;
  /** Where progress goes (default stderr). */
  readonly log?: (line: string) => void;
}

export const FIXTURES_ROOT = new URL('../fixtures/images', import.meta.url).pathname;

const DEFAULT_TIMEOUT_MS = 45 * 60_000;
/** The build output kept for a failure's message: its last lines. */
const TAIL_BYTES = 64 * 1024;
const TAIL_LINES = 12;

/** The fixture folders under `root` with a Dockerfile, and the fixtures each builds FROM. */
export function listFixtures(root = FIXTURES_ROOT, prefix = FIXTURE_PREFIX): FixtureImage[] {
  const names = readdirSync(root, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(root, entry.name, 'Dockerfile')))
    .map((entry) => entry.name)
    .sort();
  return names.map((name) => {
    const dir = join(root, name);
    return {
      name,
      dir,
      needs: fixtureParents(readFileSync(join(dir, 'Dockerfile'), 'utf8'), prefix),
    };
  });
}

/** The fixture names a Dockerfile's FROM lines name (`FROM proctor-test-<name>[:tag]`). */
export function fixtureParents(dockerfile: string, prefix = FIXTURE_PREFIX): string[] {
  const parents = new Set<string>();
  for (const line of dockerfile.split('\n')) {
    const words = line.trim().split(/\s+/);
    if (words[0]?.toUpperCase() !== 'FROM') continue;
    // FROM [--platform=…] image[:tag|@digest] [AS stage]
    const image = words.slice(1).find((word) => !word.startsWith('--'));
    if (image?.startsWith(prefix)) parents.add(image.slice(prefix.length).split(/[:@]/)[0] ?? '');
  }
  return [...parents];
}

/**
 * The fixtures in an order where each comes after the ones it builds FROM; an unknown parent
 * or a cycle throws, naming the fixture.
 */
export function buildOrder(fixtures: readonly FixtureImage[]): FixtureImage[] {
  const byName = new Map(fixtures.map((f) => [f.name, f]));
  const ordered: FixtureImage[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (fixture: FixtureImage, path: string[]): void => {
    const seen = state.get(fixture.name);
    if (seen === 'done') return;
    if (seen === 'visiting') {
      throw new Error(
        `fixture images build FROM each other in a cycle: ${[...path, fixture.name].join(' -> ')}`,
      );
    }
    state.set(fixture.name, 'visiting');
    for (const need of fixture.needs) {
      const parent = byName.get(need);
      if (!parent) {
        throw new Error(
          `fixture image ${fixture.name} builds FROM ${FIXTURE_PREFIX}${need}, which no fixture folder makes`,
        );
      }
      visit(parent, [...path, fixture.name]);
    }
    state.set(fixture.name, 'done');
    ordered.push(fixture);
  };
  for (const fixture of fixtures) visit(fixture, []);
  return ordered;
}

/** What one build did. */
export interface FixtureBuild {
  readonly name: string;
  readonly imageId: string;
  /** True when the image id did not change: every step came from the cache. */
  readonly cached: boolean;
  readonly seconds: number;
}

/**
 * Builds every fixture under the root (parents first, `concurrency` at once); the first
 * failure stops new builds, waits for the running ones and throws one line naming the image
 * and the build's last error line (the last lines go to the log before it).
 */
export async function buildFixtureImages(
  options: FixtureBuildOptions = {},
): Promise<FixtureBuild[]> {
  const root = options.root ?? FIXTURES_ROOT;
  const prefix = options.prefix ?? FIXTURE_PREFIX;
  const concurrency = options.concurrency ?? 2;
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new Error(`Expected \`concurrency\` to be an integer >= 1, got \`${concurrency}\``);
  }
  const pending = buildOrder(listFixtures(root, prefix));
  const done = new Map<string, FixtureBuild>();
  const running = new Set<string>();
  let failure: Error | undefined;
  return new Promise((resolve, reject) => {
    const next = (): void => {
      if (failure !== undefined) {
        if (running.size === 0) reject(failure);
        return;
      }
      if (pending.length === 0 && running.size === 0) {
        resolve([...done.values()]);
        return;
      }
      while (running.size < concurrency) {
        // The first fixture whose parents are built (the order puts parents first).
        const index = pending.findIndex((f) => f.needs.every((need) => done.has(need)));
        if (index < 0) return;
        const [fixture] = pending.splice(index, 1);
        if (!fixture) return;
        running.add(fixture.name);
        buildFixture(fixture, { ...options, prefix })
          .then(
            (build) => done.set(fixture.name, build),
            (error: unknown) => {
              failure ??= error instanceof Error ? error : new Error(String(error));
            },
          )
          .finally(() => {
            running.delete(fixture.name);
            next();
          });
      }
    };
    next();
  });
}

/** Builds one fixture; progress lines are `fixture image <name>: started|built in N s|cached`. */
export async function buildFixture(
  fixture: Pick<FixtureImage, 'name' | 'dir'>,
  options: Omit<FixtureBuildOptions, 'root' | 'concurrency'> = {},
): Promise<FixtureBuild> {
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const tag = `${options.prefix ?? FIXTURE_PREFIX}${fixture.name}:latest`;
  const started = Date.now();
  const before = await imageId(tag);
  log(`fixture image ${fixture.name}: started`);
  let failure: string | undefined;
  let output = '';
  // A build whose cache named an image that another test's cleanup removed meanwhile (`unable
  // to find image sha256:…`, seen with three test files at a time) is run again, once.
  for (let attempt = 1; attempt <= 2; attempt++) {
    failure = undefined;
    try {
      await buildDockerfile(
        testDockerClient(),
        { contextDir: fixture.dir, dockerfile: 'Dockerfile' },
        { tag, timeoutMs: options.buildTimeoutMs ?? DEFAULT_TIMEOUT_MS, trust: hostTrust() },
      );
    } catch (error) {
      failure = error instanceof ProctorError ? error.code : 'an error';
      const log = (error as { data?: { buildLog?: unknown } }).data?.buildLog;
      output = typeof log === 'string' && log !== '' ? log : describeError(error);
    }
    if (failure === undefined || !/unable to find image "?sha256:/.test(output)) break;
    log(`fixture image ${fixture.name}: a cached layer went during the build; building again`);
  }
  const seconds = Math.round((Date.now() - started) / 100) / 10;
  if (failure !== undefined) {
    const tail = output
      .split('\n')
      .filter((line) => line.trim() !== '')
      .slice(-TAIL_LINES);
    for (const line of tail) log(`fixture image ${fixture.name}: | ${line}`);
    const inside = relative(process.cwd(), fixture.dir);
    const where = inside !== '' && !inside.startsWith('..') ? inside : fixture.dir;
    const error = new Error(
      `fixture image ${tag} did not build (${where}, ${failure} after ${seconds} s): ${tail.at(-1) ?? 'no output'}`,
    );
    error.stack = `Error: ${error.message}`;
    throw error;
  }
  const after = await imageId(tag);
  if (after === null) throw new Error(`fixture image ${tag} was built but is not in the engine`);
  const cached = after === before;
  log(
    `fixture image ${fixture.name}: ${cached ? `cached (${seconds} s)` : `built in ${seconds} s`}`,
  );
  return { name: fixture.name, imageId: after, cached, seconds };
}

let client: DockerClient | undefined;
function testDockerClient(): DockerClient {
  client ??= createDockerClient(process.env['DOCKER_HOST']);
  return client;
}

/**
 * The host's CA bundle and proxy settings, as Proctor offers them to a task's build: fixtures
 * that fetch from npm or a Go proxy build behind a TLS-inspecting proxy too.
 */
function hostTrust(): BuildTrust {
  return buildTrust({ home: FIXTURES_ROOT, build: {} });
}

/** The local id of an image, or null when the engine has none by that name. */
export async function imageId(tag: string): Promise<string | null> {
  const result = await runDocker(['image', 'inspect', '--format', '{{.Id}}', tag], 60_000);
  return result.failure === undefined ? result.tail.trim() : null;
}

/** Runs the docker CLI; its merged output's last TAIL_BYTES, and why it failed if it did. */
function runDocker(
  args: string[],
  timeoutMs: number,
): Promise<{ tail: string; failure: string | undefined }> {
  return new Promise((resolve) => {
    const child = spawn('docker', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let tail = '';
    let timedOut = false;
    const keep = (chunk: Buffer) => {
      tail = (tail + chunk.toString('utf8')).slice(-TAIL_BYTES);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGTERM');
    }, timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      resolve({ tail: `${tail}\n${error.message}`, failure: 'the docker CLI did not start' });
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const failure = timedOut
        ? `no result within its limit of ${Math.round(timeoutMs / 1000)} s`
        : code === 0
          ? undefined
          : `exit status ${code ?? signal}`;
      resolve({ tail, failure });
    });
  });
}
