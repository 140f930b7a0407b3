// `proctor prune`: removes this home's workspace templates, and refuses bad input in one line.
import { describe, expect, it } from 'vitest';
import { createTemplateStore, listTemplates } from '../../src/sandbox/template.js';
import { createWorkspace } from '../../src/sandbox/workspace.js';
import { proctor } from '../helpers/cli.js';
import {
  dockerScope,
  fixtureImage,
  readFromImage,
  testDocker,
  testOwner,
} from '../helpers/docker.js';
import { tempDir } from '../helpers/temp.js';

const docker = testDocker();
const scope = dockerScope(docker, 'cli-prune');

function oneLine(text: string) {
  expect(text.trim().split('\n')).toHaveLength(1);
  expect(text).not.toMatch(/\n\s+at /);
}

describe('proctor prune', () => {
  it("removes the home's workspace templates and no other home's", async () => {
    const home = tempDir();
    const image = await fixtureImage('git-history');
    const base = await readFromImage(image, '/base_commit');
    for (const history of ['full', 'none'] as const) {
      await createWorkspace(docker, {
        owner: testOwner(docker, scope.prefix, home),
        role: 'evaluator',
        image,
        repoPath: '/repo',
        baseCommit: base,
        uid: 1000,
        gid: 1000,
        history,
        templates: createTemplateStore(),
      });
    }
    expect(await listTemplates(docker, home)).toHaveLength(2);
    const other = tempDir();
    const none = await proctor(['--home', other, 'prune']);
    expect(none).toMatchObject({ code: 0, stdout: 'removed 0 workspace template(s)\n' });
    expect(await listTemplates(docker, home)).toHaveLength(2);

    const kept = await proctor(['--home', home, 'prune', '--keep', '1', '--json']);
    expect(kept.code).toBe(0);
    expect((JSON.parse(kept.stdout) as { removed: string[] }).removed).toHaveLength(1);
    const all = await proctor(['--home', home, 'prune']);
    expect(all).toMatchObject({ code: 0, stdout: 'removed 1 workspace template(s)\n' });
    expect(await listTemplates(docker, home)).toEqual([]);
  });

  it('refuses a bad --keep and stray arguments in one line, exit 2', async () => {
    const home = tempDir();
    for (const args of [
      ['prune', '--keep', 'x'],
      ['prune', '--keep', '-1'],
      ['prune', 'extra'],
      ['prune', '--all'],
    ]) {
      const result = await proctor(['--home', home, ...args]);
      expect(result.code).toBe(2);
      oneLine(result.stderr.split('\nsee:')[0] ?? '');
      expect(result.stderr).toMatch(/^proctor: /);
      expect(result.stdout).toBe('');
    }
    const bad = await proctor(['--home', home, 'prune', '--keep', 'x']);
    expect(bad.stderr).toContain('--keep: expected an integer from 0 to 1000');
  });
});
