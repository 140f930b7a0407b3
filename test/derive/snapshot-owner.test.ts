// The snapshot stage that derive and `import swebench` append to an environment's Dockerfile
// (src/derive/snapshot.ts), built by the real engine: the work tree it makes is the default
// sandbox user's (uid and gid 1000) in the same layer, so that a workspace template has
// nothing of it to copy up; a package installed under node_modules before it stays root's, as
// a template leaves an installed package.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeEnvironment } from '../../src/derive/snapshot.js';
import { execFileAsync, fixtureImage } from '../helpers/docker.js';
import { commit, newRepo } from '../helpers/repos.js';
import { tempDir } from '../helpers/temp.js';

describe('the snapshot stage', () => {
  it('gives the work tree to the sandbox user, and leaves a package installed under node_modules root’s', async () => {
    const repo = newRepo();
    const base = commit(repo, { 'a.txt': 'one\n', 'src/b.txt': 'two\n' }, 'base');
    const context = tempDir('proctor-env-');
    // An image with git whose work tree already holds an installed package.
    writeFileSync(
      join(context, 'Dockerfile'),
      [
        `FROM ${await fixtureImage('git-owned')}`,
        'RUN mkdir -p /w/node_modules/pkg /w/node_modules/.bin \\',
        ' && echo "module.exports = 1" > /w/node_modules/pkg/index.js',
        '',
      ].join('\n'),
    );
    const target = join(tempDir('proctor-bundle-'), 'environment');
    mkdirSync(join(target, '..'), { recursive: true });
    await writeEnvironment(context, target, repo, base, '/w');
    const tag = 'proctor-test-snapshot-owner';
    await execFileAsync('docker', ['build', '-q', '-t', tag, target]);
    const { stdout } = await execFileAsync('docker', [
      'run',
      '--rm',
      '--network',
      'none',
      tag,
      'sh',
      '-c',
      'cd /w && find . -printf "%U:%G %p\\n" | grep -v "^1000:1000 ./.git/" | sort -k2',
    ]);
    expect(stdout.trim().split('\n')).toEqual([
      '1000:1000 .',
      '1000:1000 ./.git',
      '1000:1000 ./a.txt',
      '1000:1000 ./node_modules',
      '1000:1000 ./node_modules/.bin',
      '0:0 ./node_modules/pkg',
      '0:0 ./node_modules/pkg/index.js',
      '1000:1000 ./src',
      '1000:1000 ./src/b.txt',
    ]);
  });
});
