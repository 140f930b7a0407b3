// The screen's hits in `proctor report` and `proctor status` over a real SQLite home: a count
// per batch in the summary, a `suspicious` column per row in jsonl and csv, and a
// `suspicious` field per job in `status --json`. Results are shaped as the oracle writes them.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { proctor } from '../helpers/cli.js';
import { seedGrades } from '../helpers/results.js';
import { tempDir, tempStore } from '../helpers/temp.js';

async function home() {
  const dir = tempDir();
  const store = tempStore({ path: join(dir, 'proctor.db') });
  const batch = await seedGrades(store, 'flagged', [
    { task: 'a', verdict: 'PASS', suspicious: 2 },
    { task: 'b', verdict: 'FAIL', reason: 'TAMPER_SUSPECTED', suspicious: 5 },
    { task: 'c', verdict: 'PASS', suspicious: 0 },
    // A grade recorded before the screen existed: no count, not zero.
    { task: 'd', verdict: 'PASS' },
  ]);
  return { dir, batch };
}

describe('suspicious candidates in reports', () => {
  it('counts the flagged attempts of a batch in the table and the json summary', async () => {
    const { dir, batch } = await home();
    const table = await proctor(['--home', dir, 'report', batch]);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(
      /\n {2}suspicious {14}2 attempts with screen hits \(see their oracle logs\)\n/,
    );
    // TAMPER_SUSPECTED is the candidate's fault: unresolved.
    expect(table.stdout).toMatch(/unresolved\s+1\n/);
    const json = await proctor(['--home', dir, 'report', batch, '--format', 'json']);
    const parsed = JSON.parse(json.stdout) as { batches: Array<Record<string, unknown>> };
    expect(parsed.batches[0]).toMatchObject({ suspicious: 2 });
  });

  it('gives each jsonl and csv row its count of hits, empty when none was recorded', async () => {
    const { dir, batch } = await home();
    const jsonl = await proctor(['--home', dir, 'report', batch, '--format', 'jsonl']);
    const rows = jsonl.stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(rows.map((r) => [r['task'], r['suspicious']])).toEqual([
      ['a', 2],
      ['b', 5],
      ['c', 0],
      ['d', null],
    ]);
    const csv = await proctor(['--home', dir, 'report', batch, '--format', 'csv']);
    const [header, ...lines] = csv.stdout.trimEnd().split('\n');
    const column = header!.split(',').indexOf('suspicious');
    expect(column).toBeGreaterThan(header!.split(',').indexOf('candidate_sha256'));
    expect(lines.map((l) => l.split(',')[column])).toEqual(['2', '5', '0', '']);
  });

  it('gives each job of status --json its count, a SUSPICIOUS column in the batch table, and a line for one job', async () => {
    const { dir, batch } = await home();
    const status = await proctor(['--home', dir, 'status', '--batch', batch, '--json']);
    const parsed = JSON.parse(status.stdout) as { jobs: Array<{ suspicious: number | null }> };
    expect(parsed.jobs.map((j) => j.suspicious)).toEqual([2, 5, 0, null]);
    const table = await proctor(['--home', dir, 'status', '--batch', batch]);
    const lines = table.stdout.split('\n');
    const header = lines.find((l) => l.startsWith('JOB'));
    expect(header).toMatch(/\sSUSPICIOUS\s+DETAIL$/);
    const column = header!.indexOf('SUSPICIOUS');
    const cells = lines.filter((l) => /^\d/.test(l)).map((l) => l.slice(column).split(/\s+/)[0]);
    expect(cells).toEqual(['2', '5', '0', '-']);
    const [first] = (JSON.parse(status.stdout) as { jobs: Array<{ id: number }> }).jobs;
    const text = await proctor(['--home', dir, 'status', String(first!.id)]);
    expect(text.stdout).toContain(
      `job ${first!.id} suspicious: 2 hits of the screen (listed in its oracle log)`,
    );
  });
});
