// Image identity against the real engine and a real registry: digests that must match
// RepoDigests, local builds that change with their context, and the commit read with git
// inside the image by a hardened probe that always goes away.
import { execFileSync } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { copyFileSync, mkdirSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { isProctorError } from '../../src/errors.js';
import { createDockerClient, requireDocker } from '../../src/sandbox/docker.js';
import {
  readRepositoryHead,
  resolveImage,
  type ImageSource,
  type ResolveImageOptions,
} from '../../src/sandbox/image.js';
import type { Owner } from '../../src/sandbox/labels.js';
import { testDocker, testOwner } from '../helpers/docker.js';
import { dockerCli, pushImage, startRegistry } from '../helpers/registry.js';
import { onCleanup, tempDir } from '../helpers/temp.js';

const docker = testDocker();
const FIXTURES = fileURLToPath(new URL('../fixtures/images/', import.meta.url));
const SLOW = 600_000;

/** A Dockerfile context in a temp dir; `files` maps relative paths to contents. */
function context(files: Record<string, string>): string {
  const dir = tempDir();
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

const build = (contextDir: string, options: ResolveImageOptions = {}) =>
  resolveImage(docker, { kind: 'dockerfile', contextDir, dockerfile: 'Dockerfile' }, options);

/** A throwaway image unique to this test, removed after it. */
async function uniqueImage(): Promise<string> {
  const dir = context({ Dockerfile: 'FROM scratch\nCOPY marker /marker\n', marker: randomUUID() });
  const { localId } = await build(dir);
  onCleanup(() => dockerCli('rmi', '-f', localId).then(() => undefined));
  return localId;
}

/** Scratch images with a fixed marker: deterministic ids, cached across runs. */
const variant = async (name: 'a' | 'b') =>
  (
    await build(context({ Dockerfile: 'FROM scratch\nCOPY marker /marker\n', marker: name }), {
      tag: `proctor-test-scratch:${name}`,
    })
  ).localId;

async function rejection(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!isProctorError(error)) throw new Error(`expected a ProctorError, got ${String(error)}`);
  return error;
}

/** Lists this owner's containers now, before the after-test reaper could hide a leak. */
async function leftovers(owner: Owner): Promise<string[]> {
  const found = await docker.listContainers({
    all: true,
    filters: { label: [`proctor.job=${owner.job}`] },
  });
  return found.map((c) => c.Id);
}

/** The fixture's commit, recomputed on the host from the same inputs (never from the image). */
function expectedCommit(): string {
  const dir = tempDir();
  copyFileSync(join(FIXTURES, 'git-repo', 'README'), join(dir, 'README'));
  const date = '2024-01-01T00:00:00Z';
  const env = {
    ...process.env,
    HOME: dir,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_AUTHOR_DATE: date,
    GIT_COMMITTER_DATE: date,
  };
  const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, env }).toString().trim();
  git('init', '-q', '-b', 'main');
  git('add', 'README');
  git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '-m', 'init');
  return git('rev-parse', 'HEAD');
}

let gitImage: string;
let fakeGit: string;
let plainImage: string;

beforeAll(async () => {
  await requireDocker(docker);
  const fixture = (name: string) =>
    resolveImage(
      docker,
      { kind: 'dockerfile', contextDir: join(FIXTURES, name), dockerfile: 'Dockerfile' },
      { tag: `proctor-test-${name}:latest` },
    );
  [gitImage, fakeGit] = (await Promise.all([fixture('git-repo'), fixture('fake-git')])).map(
    (r) => r.localId,
  ) as [string, string];
  plainImage = (await docker.getImage('debian:bookworm-slim').inspect()).Id;
}, SLOW);

describe('resolveImage with a Dockerfile', () => {
  it('records a local, non-portable build whose image id serves both roles', async () => {
    const image = await build(join(FIXTURES, 'git-repo'));
    expect(image).toMatchObject({
      localId: gitImage,
      identity: { portable: false, kind: 'local_build', imageId: gitImage },
    });
    expect(image.buildLog).toContain('FROM debian:bookworm-slim');
    const info = await docker.getImage(image.localId).inspect();
    expect(info.Config.Labels).toMatchObject({ 'proctor.build': '1' });
  });

  it('gives a new image id for a changed lockfile and the same id for an unchanged context', async () => {
    const dir = context({
      Dockerfile: 'FROM debian:bookworm-slim\nCOPY app.lock /app.lock\n',
      'app.lock': 'left-pad 1.0.0\n',
    });
    const first = await build(dir, { tag: 'proctor-test-lockfile:1' });
    expect((await build(dir)).localId).toBe(first.localId);
    writeFileSync(join(dir, 'app.lock'), 'left-pad 1.0.1\n');
    const changed = await build(dir, { tag: 'proctor-test-lockfile:2' });
    expect(changed.localId).not.toBe(first.localId);
  });

  it('refuses a Dockerfile path that escapes the context, naming it', async () => {
    const dir = context({ 'inner/Dockerfile': 'FROM scratch\n', Dockerfile: 'FROM scratch\n' });
    symlinkSync('/etc/hostname', join(dir, 'inner', 'Linked'));
    for (const dockerfile of [
      '../Dockerfile',
      '/etc/hostname',
      'inner/../../Dockerfile',
      'inner/Linked',
    ]) {
      const source: ImageSource = {
        kind: 'dockerfile',
        contextDir: join(dir, 'inner'),
        dockerfile,
      };
      const error = await rejection(resolveImage(docker, source));
      expect(error.code).toBe('IMAGE_INVALID');
      expect(error.message).toContain(JSON.stringify(dockerfile));
    }
  });

  it('refuses a context holding a symlink that leaves it, and packs one that stays inside', async () => {
    const dir = context({ Dockerfile: 'FROM scratch\nCOPY ok /ok\n', 'ok/file': 'x' });
    symlinkSync('file', join(dir, 'ok', 'inside'));
    symlinkSync('../../../etc/passwd', join(dir, 'ok', 'leak'));
    const error = await rejection(build(dir));
    expect(error).toMatchObject({
      code: 'IMAGE_INVALID',
      message: expect.stringContaining('symlink ok/leak'),
    });
    unlinkSync(join(dir, 'ok', 'leak'));
    const image = await build(dir, { tag: 'proctor-test-symlink:latest' });
    expect(image.localId).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it('fails a build whose step fails with the tail of its output', async () => {
    const dir = context({
      Dockerfile: `FROM debian:bookworm-slim\nRUN echo "about to fail ${randomUUID()}" && false\n`,
    });
    const error = (await rejection(build(dir))) as {
      code: string;
      message: string;
      data?: { buildLog?: string };
    };
    expect(error.code).toBe('IMAGE_INVALID');
    expect(error.message).toMatch(/^building Dockerfile in .* failed: .*non-zero code: 1/);
    expect(error.message).toContain('about to fail');
    expect(error.data?.buildLog).toContain('about to fail');
  });

  it('says how to make a Debian base image that is not in the engine, first, and names any other', async () => {
    const suite = `nosuch${randomUUID()
      .replace(/[^a-f]/g, '')
      .slice(0, 8)}`;
    const dir = context({
      Dockerfile: `FROM debian:bookworm-slim AS tools\nFROM debian:${suite}-slim\nCOPY --from=tools /bin/true /t\n`,
    });
    const error = await rejection(build(dir));
    expect(error.code).toBe('IMAGE_INVALID');
    const [first, second] = error.message.split('\n');
    expect(first).toBe(
      `the base image debian:${suite}-slim is not in the engine and no registry gave it: make it with \`bash docker/base-image.sh ${suite}\` (Debian's debootstrap; docs/development.md)`,
    );
    expect(second).toMatch(/^building Dockerfile in .* failed: /);
    // An image present (bookworm) is not named; a build that failed for another reason gets no hint.
    expect(error.message).not.toContain('debian:bookworm-slim is not');
    const other = context({ Dockerfile: `FROM proctor-none-${suite}:1\n` });
    const otherError = (await rejection(build(other))) as { message: string };
    expect(otherError.message.split('\n')[0]).toBe(
      `the base image proctor-none-${suite}:1 is not in the engine and no registry gave it: pull or load it into the engine first`,
    );
  });

  it('keeps only the head and tail of a flooding build log', async () => {
    const flood = `RUN echo ${randomUUID()} && head -c 3000000 /dev/zero | tr '\\0' x && echo && echo last-line`;
    const image = await build(context({ Dockerfile: `FROM debian:bookworm-slim\n${flood}\n` }));
    onCleanup(() => dockerCli('rmi', '-f', image.localId).then(() => undefined));
    expect(image.buildLog?.length).toBeLessThanOrEqual(65_536 + 64);
    expect(image.buildLog).toMatch(/^Step 1\/3 : FROM debian[^]*bytes omitted/);
    expect(image.buildLog).toContain('last-line');
  });

  it('stops a build at its timeout and on abort', async () => {
    const dir = context({
      Dockerfile: `FROM debian:bookworm-slim\nRUN sleep 120 # ${randomUUID()}\n`,
    });
    const started = Date.now();
    expect(await rejection(build(dir, { timeoutMs: 1_500 }))).toMatchObject({
      code: 'DOCKER_ERROR',
      message: expect.stringContaining('timed out after 1500 ms'),
    });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 500);
    expect((await rejection(build(dir, { signal: controller.signal }))).message).toContain(
      'was aborted',
    );
    expect(Date.now() - started).toBeLessThan(15_000);
  });
});

describe('resolveImage with a reference', () => {
  const digestOf = (text: string) => `sha256:${createHash('sha256').update(text).digest('hex')}`;

  it('says so when no Docker engine answers', async () => {
    const nowhere = createDockerClient(`unix://${join(tempDir(), 'docker.sock')}`);
    const reference = `127.0.0.1:5000/app@${digestOf('app')}`;
    const error = await rejection(resolveImage(nowhere, { kind: 'image', reference }));
    expect(error.code).toBe('DOCKER_UNAVAILABLE');
  });

  it('refuses references without a well-formed digest, naming them', async () => {
    const hex = 'a'.repeat(64);
    for (const reference of [
      'debian:bookworm-slim',
      'debian@sha256:abc',
      `debian@sha256:${hex.toUpperCase()}`,
      `debian@sha512:${hex}`,
      `Debian@sha256:${hex}`,
    ]) {
      const error = await rejection(resolveImage(docker, { kind: 'image', reference }));
      expect(error.code).toBe('IMAGE_INVALID');
      expect(error.message).toContain(JSON.stringify(reference));
    }
  });

  it('resolves a pushed digest to the local image id and records the digest', async () => {
    const { host } = await startRegistry();
    const image = await variant('a');
    const digest = await pushImage(image, `${host}/proctor-test-app:1`);
    const reference = `${host}/proctor-test-app:1@${digest}`;
    expect(await resolveImage(docker, { kind: 'image', reference })).toEqual({
      localId: image,
      identity: { portable: true, digest, reference },
    });
  });

  it('builds [environment] install on a pinned image, and refuses one that moves HEAD or leaves a file git sees', async () => {
    const { host } = await startRegistry();
    const digest = await pushImage(gitImage, `${host}/proctor-test-git:1`);
    const reference = `${host}/proctor-test-git:1@${digest}`;
    const install = (command: string) => ({
      command,
      workdir: '/repo',
      baseCommit: expectedCommit(),
    });
    const built = await resolveImage(docker, {
      kind: 'image',
      reference,
      install: install('echo built > /opt/built.txt; echo the build said this'),
    });
    expect(built.localId).not.toBe(gitImage);
    expect(built.identity).toEqual({
      portable: false,
      kind: 'local_build',
      imageId: built.localId,
    });
    expect(built.buildLog).toContain('the build said this');
    expect(
      await dockerCli('run', '--rm', '--network', 'none', built.localId, 'cat', '/opt/built.txt'),
    ).toBe('built\n');
    // The tree, what it leaves (ignored) and the tracked files, is the default sandbox user's,
    // but an installed package and a setuid file, which stay as they were; .git is root's.
    const left = await resolveImage(docker, {
      kind: 'image',
      reference,
      install: install(
        [
          'mkdir -p build/node_modules/pkg build/node_modules/.bin',
          "printf '*\\n' > build/.gitignore",
          'echo out > build/out.txt',
          'echo 1 > build/node_modules/pkg/index.js',
          'cp /bin/true build/suid && chmod 4755 build/suid',
        ].join(' && '),
      ),
    });
    expect(
      (
        await dockerCli(
          'run',
          '--rm',
          '--network',
          'none',
          left.localId,
          'sh',
          '-c',
          'cd /repo && find . README .git/HEAD -maxdepth 0 -printf "%U:%G %p\\n" && find build -printf "%U:%G %p\\n" | sort -k2',
        )
      )
        .trim()
        .split('\n'),
    ).toEqual([
      '1000:1000 .',
      '1000:1000 README',
      '0:0 .git/HEAD',
      '1000:1000 build',
      '1000:1000 build/.gitignore',
      '1000:1000 build/node_modules',
      '1000:1000 build/node_modules/.bin',
      '0:0 build/node_modules/pkg',
      '0:0 build/node_modules/pkg/index.js',
      '1000:1000 build/out.txt',
      '0:0 build/suid',
    ]);
    const moved = await rejection(
      resolveImage(docker, {
        kind: 'image',
        reference,
        install: install('git -c user.name=a -c user.email=a@a commit -q --allow-empty -m later'),
      }),
    );
    expect(moved.code).toBe('IMAGE_INVALID');
    expect(moved.message).toMatch(
      new RegExp(
        `^\\[environment\\] install: the install moved HEAD to [0-9a-f]{40}; it must stay at the base commit ${expectedCommit()}$`,
      ),
    );
    const dirty = await rejection(
      resolveImage(docker, { kind: 'image', reference, install: install('touch new.txt') }),
    );
    expect(dirty.message).toBe(
      '[environment] install: the install left 1 file(s) that git does not ignore (its output must be ignored by git or outside the tree): untracked new.txt',
    );
  });

  it('refuses a digest that is not among the RepoDigests of that repository', async () => {
    const { host } = await startRegistry();
    const digest = await pushImage(await variant('a'), `${host}/proctor-test-app:1`);
    const unknown = await rejection(
      resolveImage(docker, {
        kind: 'image',
        reference: `${host}/proctor-test-app:1@${digestOf('nothing')}`,
      }),
    );
    expect(unknown.code).toBe('IMAGE_INVALID');
    expect(unknown.message).toContain(digestOf('nothing'));
    expect(unknown.message).toContain(`${host}/proctor-test-app@${digest}`);
    // The same manifest under another repository name is not that repository's image.
    const elsewhere = await rejection(
      resolveImage(docker, { kind: 'image', reference: `${host}/proctor-test-other@${digest}` }),
    );
    expect(elsewhere.code).toBe('IMAGE_INVALID');
  });

  it('pulls an image removed locally back through the daemon by digest', async () => {
    const { host } = await startRegistry();
    const image = await uniqueImage();
    const digest = await pushImage(image, `${host}/proctor-test-gone:1`);
    await dockerCli('rmi', '-f', image);
    await expect(docker.getImage(image).inspect()).rejects.toMatchObject({ statusCode: 404 });
    const resolved = await resolveImage(docker, {
      kind: 'image',
      reference: `${host}/proctor-test-gone@${digest}`,
    });
    expect(resolved.localId).toBe(image);
    expect((await docker.getImage(image).inspect()).RepoDigests).toContain(
      `${host}/proctor-test-gone@${digest}`,
    );
  });

  it('keeps an old digest on the old image after its tag was re-pushed elsewhere', async () => {
    const { host } = await startRegistry();
    const [a, b] = [await variant('a'), await variant('b')];
    const tag = `${host}/proctor-test-moving:v1`;
    const oldDigest = await pushImage(a, tag);
    const newDigest = await pushImage(b, tag);
    expect((await docker.getImage(tag).inspect()).Id).toBe(b);
    const resolve = (digest: string) =>
      resolveImage(docker, { kind: 'image', reference: `${tag}@${digest}` });
    expect((await resolve(oldDigest)).localId).toBe(a);
    expect((await resolve(newDigest)).localId).toBe(b);
    // Also after a pull: the registry serves the old manifest by digest, never the tag's target.
    await dockerCli('rmi', `${host}/proctor-test-moving@${oldDigest}`);
    expect((await resolve(oldDigest)).localId).toBe(a);
  });

  it('stops a pull from a registry that never answers at its timeout', async () => {
    const sockets = new Set<Socket>();
    const server = createServer((socket) => sockets.add(socket));
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    onCleanup(() => {
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((done) => server.close(() => done()));
    });
    const { port } = server.address() as { port: number };
    const started = Date.now();
    const error = await rejection(
      resolveImage(
        docker,
        { kind: 'image', reference: `127.0.0.1:${port}/stuck@${digestOf('stuck')}` },
        { timeoutMs: 2_000 },
      ),
    );
    expect(error).toMatchObject({
      code: 'DOCKER_ERROR',
      message: expect.stringContaining('timed out after 2000 ms'),
    });
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});

describe('readRepositoryHead', () => {
  const read = (owner: Owner, image: string, workdir: string, timeoutMs?: number) =>
    readRepositoryHead(docker, image, workdir, {
      owner,
      uid: 1000,
      gid: 1000,
      ...(timeoutMs ? { timeoutMs } : {}),
    });

  it('reads the commit with git inside the image, not from its labels, and leaves no container', async () => {
    const owner = testOwner(docker, 'image-head');
    const head = await read(owner, gitImage, '/repo');
    expect(head).toBe(expectedCommit());
    const labels = (await docker.getImage(gitImage).inspect()).Config.Labels ?? {};
    expect(labels['org.opencontainers.image.revision']).not.toBe(head);
    expect(await leftovers(owner)).toEqual([]);
  });

  it.each([
    ['/repo-missing', /^no git work tree at \/repo-missing/],
    ['/etc', /^no git work tree at \/etc/],
    ['/empty', /^the git work tree at \/empty has no commit at HEAD/],
  ])('refuses %s as a repository', async (workdir, message) => {
    const owner = testOwner(docker, 'image-head');
    expect(await rejection(read(owner, gitImage, workdir))).toMatchObject({
      code: 'IMAGE_INVALID',
      message: expect.stringMatching(message),
    });
    expect(await leftovers(owner)).toEqual([]);
  });

  it('says so when the image has no git', async () => {
    const owner = testOwner(docker, 'image-head');
    expect(await rejection(read(owner, plainImage, '/repo'))).toMatchObject({
      code: 'IMAGE_INVALID',
      message: expect.stringContaining('git is not installed in the image'),
    });
    expect(await leftovers(owner)).toEqual([]);
  });

  it('kills and removes a probe that hangs past its timeout or is aborted', async () => {
    const owner = testOwner(docker, 'image-head');
    const started = Date.now();
    expect(await rejection(read(owner, fakeGit, '/hang', 2_000))).toMatchObject({
      code: 'DOCKER_ERROR',
      message: expect.stringContaining('timed out after 2000 ms'),
    });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 500);
    const aborted = readRepositoryHead(docker, fakeGit, '/hang', {
      owner,
      uid: 1000,
      gid: 1000,
      signal: controller.signal,
    });
    expect((await rejection(aborted)).message).toContain('was aborted');
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(await leftovers(owner)).toEqual([]);
  });

  it('bounds a flood of output and refuses it as a commit id', async () => {
    const owner = testOwner(docker, 'image-head');
    const error = await rejection(read(owner, fakeGit, '/flood'));
    expect(error).toMatchObject({
      code: 'IMAGE_INVALID',
      message: expect.stringContaining('printed no commit id'),
    });
    expect(error.message.length).toBeLessThan(500);
    expect(await leftovers(owner)).toEqual([]);
  });
});
