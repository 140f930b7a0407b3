import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { defaultId } from '../../src/derive/derive.js';
import { nameOfRemote, originRepo, repoOfRemote } from '../../src/derive/origin.js';
import { sourceSchema } from '../../src/oracle/task-source.js';
import { commit, gitIn, newRepo } from '../helpers/repos.js';
import { tempDir } from '../helpers/temp.js';

describe('[source].repo from the origin remote', () => {
  it('is owner/name for GitHub and the https URL elsewhere', () => {
    const cases: Array<[string, string | undefined]> = [
      ['https://github.com/pytoolz/toolz.git', 'pytoolz/toolz'],
      ['https://github.com/pytoolz/toolz', 'pytoolz/toolz'],
      ['git@github.com:hukkin/tomli.git', 'hukkin/tomli'],
      ['ssh://git@github.com/hukkin/tomli.git', 'hukkin/tomli'],
      ['https://gitlab.example/group/sub/name.git', 'https://gitlab.example/group/sub/name'],
      // Credentials, local paths and other forms give nothing.
      ['https://user:token@github.com/a/b.git', undefined],
      ['/srv/mirrors/toolz.git', undefined],
      ['file:///srv/toolz', undefined],
      ['git://example.org/a/b', undefined],
      ['https://github.com/only-owner', undefined],
    ];
    for (const [url, repo] of cases) {
      expect(repoOfRemote(url), url).toBe(repo);
      if (repo !== undefined) expect(sourceSchema.safeParse({ repo }).success).toBe(true);
    }
  });

  it('reads origin of a repository, and nothing when it has none', async () => {
    const repo = newRepo();
    expect(await originRepo(repo)).toBeUndefined();
    gitIn(repo, ['remote', 'add', 'origin', 'https://github.com/acme/calc.git']);
    expect(await originRepo(repo)).toBe('acme/calc');
  });
});

describe("a derived task's default id", () => {
  const ID = /^[a-z0-9][a-z0-9._-]{0,127}$/;

  /** A project, and a bare clone of it kept in a folder named `repo` (as mirrors often are). */
  function bareMirror(origin: string | null) {
    const project = newRepo(join(tempDir('proctor-project-'), 'calc'));
    const fix = commit(project, { 'calc.py': 'x = 1\n' }, 'fix');
    const mirror = join(tempDir('proctor-mirror-'), 'repo');
    execFileSync('git', ['clone', '-q', '--bare', project, mirror]);
    if (origin === null) gitIn(mirror, ['remote', 'remove', 'origin']);
    else gitIn(mirror, ['remote', 'set-url', 'origin', origin]);
    return { mirror, fix };
  }

  it("is named after origin's project, not the folder `repo` the mirror is kept in", async () => {
    const { mirror, fix } = bareMirror('https://github.com/pytoolz/toolz.git');
    expect(await originRepo(mirror)).toBe('pytoolz/toolz');
    expect(await defaultId(mirror, fix)).toBe(`toolz-${fix.slice(0, 12)}`);
  });

  it('takes the name from any form of origin, and sanitizes it to the id pattern', async () => {
    const cases: Array<[string, string]> = [
      ['https://gitlab.example/group/sub/Name.Lib.git/', 'name.lib'],
      ['git@github.com:hukkin/tomli.git', 'tomli'],
      ['ssh://git@example.org:2222/srv/My Project.git', 'my-project'],
      // No secret of the URL reaches the id, only its last path component.
      ['https://user:s3cret@example.org/team/widget.git', 'widget'],
      ['/srv/mirrors/__Toolz__.git', 'toolz__'],
      ['file:///srv/mirrors/c%2B%2B-lib', 'c--lib'],
    ];
    for (const [url, name] of cases) {
      const { mirror, fix } = bareMirror(url);
      const id = await defaultId(mirror, fix);
      expect(id, url).toBe(`${name}-${fix.slice(0, 12)}`);
      expect(id, url).toMatch(ID);
    }
  });

  it("falls back to the folder's name (without .git) when there is no origin or it names no path", async () => {
    const { mirror, fix } = bareMirror(null);
    expect(await defaultId(mirror, fix)).toBe(`repo-${fix.slice(0, 12)}`);
    const named = join(tempDir('proctor-mirror-'), 'My.Mirror.git');
    execFileSync('git', ['clone', '-q', '--bare', mirror, named]);
    gitIn(named, ['remote', 'set-url', 'origin', 'https://user:token@example.org/']);
    expect(await defaultId(named, fix)).toBe(`my.mirror-${fix.slice(0, 12)}`);
  });

  it('reads no name from a remote without a path', () => {
    for (const url of ['https://example.org', 'https://user:token@example.org/', 'host:', '']) {
      expect(nameOfRemote(url), url).toBeUndefined();
    }
  });
});
