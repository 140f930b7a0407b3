// The one-commit snapshot of a base commit, made on the host: its id depends only on the
// upstream commit (its tree, a fixed identity and date, a message naming it), so base_commit
// is known before any build; the author's repository is only read; and the git bundle holds
// exactly that commit, byte for byte.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeSnapshot, writeEnvironment } from '../../src/derive/snapshot.js';
import { commit, gitIn, newRepo } from '../helpers/repos.js';
import { tempDir } from '../helpers/temp.js';

const FILES = {
  'calc.py': 'def div(a, b):\n    return a / b\n',
  'data/x.bin': Buffer.from([0, 255]),
};

describe('the base snapshot', () => {
  it('has one commit id per upstream commit, from a clone or a bare mirror alike', async () => {
    const one = newRepo();
    const a = commit(one, FILES, 'first author');
    const mirror = join(tempDir(), 'mirror.git');
    execFileSync('git', ['clone', '-q', '--mirror', one, mirror]);
    const dir = tempDir();
    const refsBefore = gitIn(one, ['for-each-ref']);
    const first = await makeSnapshot(one, a, join(dir, 'a.bundle'));
    const second = await makeSnapshot(mirror, a, join(dir, 'b.bundle'));
    expect(first.commit).toMatch(/^[0-9a-f]{40}$/);
    expect(second.commit).toBe(first.commit);
    expect(first.upstream).toBe(a);
    // The author's repository is only read.
    expect(gitIn(one, ['for-each-ref'])).toBe(refsBefore);

    // The bundle holds one commit, parentless, whose tree is the upstream tree.
    const clone = join(tempDir(), 'clone');
    execFileSync('git', ['clone', '-q', '-b', 'proctor-base', join(dir, 'a.bundle'), clone]);
    expect(gitIn(clone, ['rev-list', '--all'])).toBe(first.commit);
    expect(gitIn(clone, ['log', '-1', '--format=%an <%ae> %at %P|%B'])).toBe(
      `Proctor <proctor@localhost> 315532800 |Proctor snapshot of ${a}`,
    );
    expect(gitIn(clone, ['rev-parse', 'HEAD^{tree}'])).toBe(
      gitIn(one, ['rev-parse', `${a}^{tree}`]),
    );
    expect(readFileSync(join(clone, 'data', 'x.bin'))).toEqual(FILES['data/x.bin']);
  });

  it("appends the snapshot stage to a copy of the build context, keeping the author's files", async () => {
    const repo = newRepo();
    const base = commit(repo, FILES, 'base');
    const context = tempDir('proctor-env-');
    execFileSync(
      'sh',
      [
        '-c',
        `printf 'FROM debian:bookworm-slim\\n' > Dockerfile; printf '*\\n' > .dockerignore; echo x > extra.txt`,
      ],
      { cwd: context },
    );
    const target = join(tempDir(), 'environment');
    const snapshot = await writeEnvironment(context, target, repo, base, '/work/tree');
    const dockerfile = readFileSync(join(target, 'Dockerfile'), 'utf8');
    expect(dockerfile.startsWith('FROM debian:bookworm-slim\n')).toBe(true);
    expect(dockerfile).toContain(`[ "$head" = ${snapshot.commit} ]`);
    expect(dockerfile).toContain("WORKDIR '/work/tree'");
    expect(dockerfile).toContain('apt-get install -y -qq --no-install-recommends git');
    // An author's .dockerignore cannot keep the snapshot out of the build.
    expect(readFileSync(join(target, '.dockerignore'), 'utf8')).toBe('*\n!proctor-base.bundle\n');
    expect(readFileSync(join(target, 'extra.txt'), 'utf8')).toBe('x\n');
    expect(readFileSync(join(context, 'Dockerfile'), 'utf8')).toBe('FROM debian:bookworm-slim\n');
  });

  it("holds a vendored submodule's files in place of its gitlink, and refuses a path that is no gitlink", async () => {
    const sub = newRepo();
    const subCommit = commit(sub, { 'lib.c': 'int one(void) { return 1; }\n' }, 'sub');
    const repo = newRepo();
    commit(repo, FILES, 'files');
    gitIn(repo, ['update-index', '--add', '--cacheinfo', `160000,${subCommit},vendor/sub`]);
    gitIn(repo, ['commit', '-q', '-m', 'gitlink']);
    const base = gitIn(repo, ['rev-parse', 'HEAD']);
    const dir = tempDir();
    const plain = await makeSnapshot(repo, base, join(dir, 'plain.bundle'));
    const vendored = [{ path: 'vendor/sub', repo: sub, commit: subCommit }];
    const snapshot = await makeSnapshot(repo, base, join(dir, 'v.bundle'), vendored);
    expect(snapshot.commit).not.toBe(plain.commit);
    // The same inputs, the same commit.
    expect((await makeSnapshot(repo, base, join(dir, 'w.bundle'), vendored)).commit).toBe(
      snapshot.commit,
    );
    const clone = join(tempDir(), 'clone');
    execFileSync('git', ['clone', '-q', '-b', 'proctor-base', join(dir, 'v.bundle'), clone]);
    expect(gitIn(clone, ['ls-tree', '-r', '--name-only', 'HEAD'])).toBe(
      ['calc.py', 'data/x.bin', 'vendor/sub/lib.c'].join('\n'),
    );
    expect(gitIn(clone, ['rev-parse', 'HEAD:vendor/sub'])).toBe(
      gitIn(sub, ['rev-parse', `${subCommit}^{tree}`]),
    );
    expect(gitIn(clone, ['log', '-1', '--format=%B'])).toBe(
      `Proctor snapshot of ${base}\n\nVendored submodule vendor/sub at ${subCommit}`,
    );
    await expect(
      makeSnapshot(repo, base, join(dir, 'x.bundle'), [
        { path: 'calc.py', repo: sub, commit: subCommit },
      ]),
    ).rejects.toThrow(`${base}: calc.py is not a submodule in its tree`);
  });
});
