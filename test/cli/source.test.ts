// [source] end to end: a baseline of bundles that carry it keeps it with every job's result
// (without hints_text) and in the oracle log, and `proctor status` shows it for a job, as an
// INSTANCE column in a batch, and beside a quarantined task. The real binary, a real SQLite
// file, the real Docker engine, and copies of the shell fixture task.
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { proctor } from '../helpers/cli.js';
import { ROOT } from '../helpers/processes.js';
import { tempDir } from '../helpers/temp.js';

const TASK = join(ROOT, 'test/fixtures/bundles/shell-task');
const UPSTREAM = '1'.repeat(40);

function copy(root: string, name: string, id: string, source: string, hidden?: string): void {
  const dir = join(root, name);
  cpSync(TASK, dir, { recursive: true });
  const toml = readFileSync(join(dir, 'task.toml'), 'utf8').replace('shell-div-zero', id);
  writeFileSync(join(dir, 'task.toml'), `${toml.trimEnd()}\n\n[source]\n${source}`);
  if (hidden !== undefined) writeFileSync(join(dir, 'tests/hidden.txt'), hidden);
}

interface JobJson {
  id: number;
  result: { task: { id: string; source?: Record<string, string> } } | null;
}

describe('[source] in results and status', () => {
  it('is kept with each baseline result and oracle log, and shown by status', async () => {
    const root = tempDir();
    copy(
      root,
      'a',
      'calc-sound',
      `dataset = "example/bench"\ninstance_id = "calc__calc-1"\nrepo = "calc/calc"\nbase_commit = "${UPSTREAM}"\nversion = "1.0"\nhints_text = "try dividing by zero"\n`,
    );
    // Only the hidden test that already passes without the fix: quarantined.
    copy(root, 'b', 'calc-unsound', 'instance_id = "calc__calc-2"\n', 't_div\n');
    const home = tempDir();
    const baseline = await proctor(['--home', home, 'baseline', root, '--gold', '--wait']);
    expect(baseline.code).toBe(1);

    const overview = await proctor(['--home', home, 'status', '--json']);
    const batch = (JSON.parse(overview.stdout) as { batches: Array<{ id: string }> }).batches[0];
    if (!batch) throw new Error(`no batch: ${overview.stdout}`);
    const listed = await proctor(['--home', home, 'status', '--batch', batch.id, '--json']);
    const jobs = (JSON.parse(listed.stdout) as { jobs: JobJson[] }).jobs;
    const byTask = new Map(jobs.map((job) => [job.result?.task.id, job]));
    const sound = byTask.get('calc-sound');
    const unsound = byTask.get('calc-unsound');
    if (!sound || !unsound) throw new Error(`jobs: ${listed.stdout}`);
    expect(sound.result?.task.source).toEqual({
      dataset: 'example/bench',
      instance_id: 'calc__calc-1',
      repo: 'calc/calc',
      base_commit: UPSTREAM,
      version: '1.0',
    });
    expect(unsound.result?.task.source).toEqual({ instance_id: 'calc__calc-2' });

    const one = await proctor(['--home', home, 'status', String(sound.id), '--log']);
    expect(one.code).toBe(0);
    const line = `dataset example/bench, instance_id calc__calc-1, repo calc/calc, base_commit ${UPSTREAM}, version 1.0`;
    expect(one.stdout).toContain(`job ${sound.id} source: ${line}`);
    expect(one.stdout).toContain(`\nsource: ${line}\n`);
    expect(one.stdout).not.toContain('try dividing by zero');

    const table = await proctor(['--home', home, 'status', '--batch', batch.id]);
    expect(table.stdout).toMatch(/JOB\s+KIND\s+STATUS\s+CLASS\s+ATTEMPT\s+INSTANCE\s+DETAIL/);
    expect(table.stdout).toMatch(
      new RegExp(`\\n${sound.id}\\s+baseline\\s+done\\s+-\\s+1/\\d+\\s+calc__calc-1\\s+valid`),
    );

    const status = await proctor(['--home', home, 'status']);
    expect(status.stdout).toMatch(/TASK\s+INSTANCE\s+REASON/);
    expect(status.stdout).toMatch(/calc-unsound\s+calc__calc-2\s+BASELINE_HIDDEN_PASSED/);
  }, 300_000);
});
