import { describe, expect, it } from 'vitest';
import { originRepo, repoOfRemote } from '../../src/derive/origin.js';
import { sourceSchema } from '../../src/oracle/task-source.js';
import { gitIn, newRepo } from '../helpers/repos.js';

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
