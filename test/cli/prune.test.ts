// `proctor prune`: removes this home's workspace templates and those of gone homes, says what
// became of each template and why, and refuses bad input in one line.
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { PruneResult } from '../../src/sandbox/template-prune.js';
import { createTemplateStore, listTemplates, removeTemplate } from '../../src/sandbox/template.js';
import { createWorkspace } from '../../src/sandbox/workspace.js';
import { proctor } from '../helpers/cli.js';
import {
  dockerScope,
  fixtureImage,
  readFromImage,
  testDocker,
  testOwner,
} from '../helpers/docker.js';
import { onCleanup, tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';
import { holdTemplate, makeTemplate, repoSpec } from '../helpers/templates.js';

const docker = testDocker();
const scope = dockerScope(docker, 'cli-prune');

/** The line of the output that names the template. */
function line(stdout: string, name: string): string | undefined {
  return stdout.split('\n').find((l) => l.startsWith(`${name} `));
}

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
        ...repoSpec(testOwner(docker, scope.prefix, home), image, base, history),
        role: 'evaluator',
        templates: createTemplateStore(),
      });
    }
    const made = (await listTemplates(docker, home)).map((t) => t.name);
    expect(made).toHaveLength(2);
    const other = tempDir();
    const none = await proctor(['--home', other, 'prune']);
    expect(none.code).toBe(0);
    for (const name of made) expect(line(none.stdout, name)).toMatch(/kept: its home exists$/);
    expect(await listTemplates(docker, home)).toHaveLength(2);

    const kept = await proctor(['--home', home, 'prune', '--keep', '1', '--json']);
    expect(kept.code).toBe(0);
    const result = JSON.parse(kept.stdout) as PruneResult;
    expect(result.removed.filter((n) => made.includes(n))).toHaveLength(1);
    const last = made.find((n) => !result.removed.includes(n)) ?? '';
    expect(line(kept.stdout, last)).toBeUndefined(); // JSON, no table
    const all = await proctor(['--home', home, 'prune']);
    expect(all.code).toBe(0);
    expect(all.stdout).toMatch(/^removed [1-9][0-9]* workspace template\(s\) \([0-9.]+ [KMG]iB\)/);
    expect(line(all.stdout, last)).toMatch(/ removed: beyond --keep 0$/);
    expect(await listTemplates(docker, home)).toEqual([]);
  });

  it('says for each template what it removed and kept, and why; also the templates of gone homes', async () => {
    // A host of this test's own: no other test's templates are this host's.
    const host = `prune-${randomBytes(3).toString('hex')}`;
    const env = { PROCTOR_HOST: host };
    const home = tempDir();
    const oldest = await makeTemplate(docker, home, host, { history: 'full' });
    // Volumes' times are whole seconds: the held one must be older than the other two, or
    // --keep 1 may keep it as the most recent (a tie) rather than for its container.
    const info = (await docker.getVolume(oldest).inspect()) as { CreatedAt?: string };
    const made = Date.parse(info.CreatedAt ?? '') || Date.now();
    await waitFor(() => Date.now() >= Math.floor(made / 1000) * 1000 + 1000, {
      what: 'the next second',
    });
    const [middle, newest] = [
      await makeTemplate(docker, home, host, { history: 'none' }),
      await makeTemplate(docker, home, host, { uid: 1001 }),
    ] as [string, string];
    const holder = await holdTemplate(docker, oldest);
    const live = tempDir();
    const gone = tempDir();
    const foreign = tempDir();
    const t = {
      live: await makeTemplate(docker, live, host),
      gone: await makeTemplate(docker, gone, host),
      foreign: await makeTemplate(docker, foreign, `${host}-b`),
    };
    rmSync(gone, { recursive: true });
    rmSync(foreign, { recursive: true });

    const first = await proctor(['--home', home, 'prune', '--keep', '1', '--json'], env);
    expect(first).toMatchObject({ code: 0, stderr: '' });
    const report = JSON.parse(first.stdout) as PruneResult;
    const of = (name: string) => report.templates.find((o) => o.name === name);
    const image = await fixtureImage('git-history');
    expect(of(oldest)).toMatchObject({
      image,
      home,
      host,
      action: 'kept',
      reason: 'in-use',
      detail: `in use by container ${holder}`,
      container: holder,
    });
    // Of the two not in use, the newer is kept (volumes' times are whole seconds: either).
    const rest = [of(middle), of(newest)].map((o) => `${o?.action} ${o?.detail}`).sort();
    expect(rest).toEqual(['kept among the 1 most recent', 'removed beyond --keep 1']);
    expect(of(newest)?.sizeKb).toBeGreaterThan(0);
    expect(of(t.gone)).toMatchObject({ home: gone, action: 'removed', reason: 'home-gone' });
    expect(of(t.gone)?.sizeKb).toBeGreaterThan(0);
    expect(of(t.live)).toMatchObject({ action: 'kept', reason: 'home-exists' });
    expect(of(t.foreign)).toMatchObject({
      action: 'kept',
      reason: 'other-host',
      detail: `another host's (${host}-b)`,
    });
    expect(report.removed).toContain(t.gone);
    expect(report.busy).toEqual(expect.arrayContaining([oldest]));
    const left = (await docker.listVolumes()).Volumes.map((v) => v.Name);
    expect(left).not.toContain(t.gone);
    expect(left).toEqual(expect.arrayContaining([oldest, t.live, t.foreign]));

    // The table: a line per template, with its image, home, size and outcome.
    const gone2 = tempDir();
    const t2 = await makeTemplate(docker, gone2, host);
    rmSync(gone2, { recursive: true });
    const table = await proctor(['--home', home, 'prune'], env);
    expect(table).toMatchObject({ code: 0, stderr: '' });
    const [summary, header] = table.stdout.split('\n');
    expect(summary).toMatch(/^removed 2 workspace template\(s\) \([0-9.]+ [KMG]iB\); kept \d+$/);
    expect(header).toMatch(/^TEMPLATE +IMAGE +HOME +SIZE +OUTCOME$/);
    const short = image.replace(/^sha256:/, '').slice(0, 12);
    expect(line(table.stdout, oldest)).toMatch(
      new RegExp(
        `^${oldest} +${short} +${home} \\(this home\\) +[0-9.]+ [KMG]iB +kept: in use by container ${holder}$`,
      ),
    );
    expect(line(table.stdout, t2)).toMatch(/ [0-9.]+ [KMG]iB +removed: home gone$/);
    expect(line(table.stdout, t.live)).toMatch(/ +kept: its home exists$/);
    expect(line(table.stdout, t.foreign)).toMatch(/ +- +kept: another host's \(.+-b\)$/);
    const kept = (await listTemplates(docker, home)).map((t) => t.name);
    expect(kept).toEqual([oldest]);
  });

  it('gives a layered template the size its own folder takes, a copied one its tree’s', async () => {
    const host = `prune-${randomBytes(3).toString('hex')}`;
    const home = tempDir();
    // A work tree whose ignored build output (4 MB) is in the image's layers.
    const image = await fixtureImage('git-layers');
    const baseCommit = await readFromImage(image, '/base_commit');
    const make = async (layered: boolean) => {
      const owner = { job: `prune-size-${randomBytes(4).toString('hex')}`, attempt: 1, home, host };
      const spec = { owner, image, repoPath: '/repo', baseCommit, uid: 1000, gid: 1000 };
      const made = await createTemplateStore().acquire(docker, {
        ...spec,
        history: 'none',
        layered,
      });
      onCleanup(async () => void (await removeTemplate(docker, made.volume)));
      return made.volume;
    };
    const copied = await make(false);
    const layered = await make(true);
    const listed = await proctor(['--home', home, 'prune', '--keep', '5', '--json'], {
      PROCTOR_HOST: host,
    });
    expect(listed).toMatchObject({ code: 0, stderr: '' });
    const report = JSON.parse(listed.stdout) as PruneResult;
    const size = (name: string) => report.templates.find((o) => o.name === name)?.sizeKb;
    // The layered one holds the template's repository and the tree's metadata, not its files.
    expect(size(copied)).toBeGreaterThan(3_900);
    expect(size(layered)).toBeGreaterThan(0);
    expect(size(layered)).toBeLessThan(1_000);
    const table = await proctor(['--home', home, 'prune', '--keep', '5'], { PROCTOR_HOST: host });
    expect(line(table.stdout, layered)).toMatch(/ [0-9.]+ [KMG]iB /);
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
