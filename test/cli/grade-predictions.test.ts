// `proctor grade SUITE --predictions FILE` end to end: the real binary, a real SQLite file and
// real grades in Docker of copies of the shell fixture task; what it refuses before anything is
// stored; and what it skips, line by line, while the rest still run.
import { cpSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { proctor } from '../helpers/cli.js';
import { leftovers } from '../helpers/home.js';
import { ROOT } from '../helpers/processes.js';
import { tempDir } from '../helpers/temp.js';

const TASK = join(ROOT, 'test/fixtures/bundles/shell-task');
const GOLD = readFileSync(join(TASK, 'solution/gold.patch'), 'utf8');

/** A suite of shell-task copies, each with its own id and optional toml/file edits. */
function suite(tasks: Record<string, { toml?: string; files?: Record<string, string> }>): string {
  const root = tempDir();
  for (const [id, edit] of Object.entries(tasks)) {
    const dir = join(root, id);
    cpSync(TASK, dir, { recursive: true });
    const toml = join(dir, 'task.toml');
    writeFileSync(
      toml,
      readFileSync(toml, 'utf8').replace('shell-div-zero', id) + (edit.toml ?? ''),
    );
    for (const [file, text] of Object.entries(edit.files ?? {}))
      writeFileSync(join(dir, file), text);
  }
  return root;
}

const prediction = (instance: string, patch: string | null, model = 'acme/model-7') =>
  JSON.stringify({ instance_id: instance, model_name_or_path: model, model_patch: patch });

function file(lines: string[]): string {
  const path = join(tempDir(), 'preds.jsonl');
  writeFileSync(path, `${lines.join('\n')}\n`);
  return path;
}

interface Summary {
  batch: string;
  model: string;
  jobs: Array<{
    line: number;
    instanceId: string;
    task: string;
    job: number;
    outcome: string | null;
    reason: string | null;
  }>;
  counts: Record<string, number>;
  skipped: Array<{ line: number; problem: string }>;
  notSubmitted: string[];
}

describe('proctor grade --predictions', () => {
  it('grades each prediction once in one batch, records empty patches without a run, and lists what it skipped', async () => {
    const root = suite({
      'shell-a': { toml: '\n[source]\ninstance_id = "acme__calc-1"\n' },
      'shell-b': {},
      'shell-c': {},
      'shell-d': {},
      'shell-e': {},
      // Its hidden test already passes without the fix: its baseline quarantines it.
      'shell-q': { files: { 'tests/hidden.txt': 't_div\n' } },
    });
    const home = tempDir();
    const baseline = await proctor(['--home', home, 'baseline', join(root, 'shell-q'), '--wait']);
    expect(baseline.stdout).toMatch(/quarantined\s+BASELINE_HIDDEN_PASSED/);
    const wrong = GOLD.replace(/echo error/g, 'echo oops');
    const preds = file([
      prediction('acme__calc-1', GOLD),
      prediction('shell-b', wrong),
      prediction('shell-c', null),
      '{"instance_id": "shell-d", "model_patch": ',
      prediction('no-such-task', GOLD),
      prediction('shell-e', GOLD),
      prediction('shell-e', wrong),
      prediction('shell-q', GOLD),
      prediction('shell-b', GOLD, 'someone/else'),
    ]);
    const result = await proctor([
      '--home',
      home,
      'grade',
      root,
      '--predictions',
      preds,
      '--wait',
      '--json',
    ]);
    expect(result.code).toBe(1);
    const stderr = result.stderr
      .trimEnd()
      .split('\n')
      .filter((l) => l.startsWith('proctor: '));
    expect(stderr).toEqual([
      `proctor: ${preds}:4: skipped: not JSON: ${stderr[0]?.split(': not JSON: ')[1]}`,
      `proctor: ${preds}:5: skipped: unknown instance_id no-such-task: no task of the suite has it as [source].instance_id or id`,
      `proctor: ${preds}:6: skipped: duplicate: instance shell-e is also predicted on line 7`,
      `proctor: ${preds}:7: skipped: duplicate: instance shell-e is also predicted on line 6`,
      `proctor: ${preds}:9: skipped: model_name_or_path "someone/else" is not the model of line 1 ("acme/model-7"); one file is one model`,
    ]);
    const summary = JSON.parse(result.stdout) as Summary;
    expect(summary.model).toBe('acme/model-7');
    expect(summary.jobs.map((j) => [j.line, j.task, j.outcome, j.reason])).toEqual([
      [1, 'shell-a', 'resolved', 'PASS'],
      [2, 'shell-b', 'unresolved', 'HIDDEN_FAILED'],
      [3, 'shell-c', 'unresolved', 'EMPTY_PATCH'],
      [8, 'shell-q', 'invalid_task', 'PASS'],
    ]);
    expect(summary.counts).toEqual({ resolved: 1, unresolved: 2, error: 0, invalid_task: 1 });
    expect(summary.notSubmitted).toEqual(['shell-d', 'shell-e']);

    // The batch is labelled with the model; the empty patch's job never ran and names no candidate.
    const status = await proctor(['--home', home, 'status', '--batch', summary.batch, '--json']);
    const listed = JSON.parse(status.stdout) as {
      batch: { label: string; total: number; outcomes: Record<string, number> };
      jobs: Array<{
        id: number;
        status: string;
        attempt: number;
        outcome: string;
        result: { reason: string; patchIsNone?: boolean; quarantined?: { reason: string } };
      }>;
    };
    expect(listed.batch).toMatchObject({
      label: 'acme/model-7',
      total: 4,
      outcomes: { resolved: 1, unresolved: 2, invalid_task: 1 },
    });
    const empty = listed.jobs.find((j) => j.id === summary.jobs[2]?.job);
    expect(empty).toMatchObject({
      status: 'done',
      attempt: 0,
      outcome: 'unresolved',
      result: { reason: 'EMPTY_PATCH', patchIsNone: true },
    });
    const quarantined = listed.jobs.find((j) => j.id === summary.jobs[3]?.job);
    expect(quarantined?.result.quarantined).toMatchObject({ reason: 'BASELINE_HIDDEN_PASSED' });

    // The report counts the suite's tasks without a prediction as not submitted,
    // and the swebench form lists them among the incomplete ones.
    const report = await proctor(['--home', home, 'report', summary.batch]);
    expect(report.code).toBe(0);
    expect(report.stdout).toMatch(/INCOMPLETE\n\s+incomplete\s+2 tasks not submitted\n/);
    expect(report.stdout).toMatch(/\n\s+tasks\s+6\n\s+submitted\s+4 \(2 not submitted\)\n/);
    expect(report.stdout).toMatch(/resolved rate \(all\)\s+16\.7% \[[^\]]+\] \(1\/6\)/);
    const swebench = await proctor([
      '--home',
      home,
      'report',
      summary.batch,
      '--format',
      'swebench',
    ]);
    expect(JSON.parse(swebench.stdout)).toMatchObject({
      total_instances: 6,
      submitted_instances: 4,
      incomplete_ids: ['shell-d', 'shell-e'],
    });

    // Without --json: a table, the classes, and the tasks not submitted.
    const again = await proctor([
      '--home',
      home,
      'grade',
      root,
      '--predictions',
      file([prediction('shell-c', '')]),
      '--wait',
    ]);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(
      /\n1\s+shell-c\s+shell-c\s+\d+\s+unresolved\s+FAIL\s+EMPTY_PATCH\s+model_patch is empty/,
    );
    expect(again.stdout).toContain(
      'acme/model-7: 1 graded (0 resolved, 1 unresolved, 0 error, 0 invalid_task); 0 skipped; 5 task(s) not submitted',
    );
    expect(again.stdout).toContain('not submitted: shell-a, shell-b, shell-d, shell-e, shell-q');
    expect(await leftovers(home)).toEqual([]);
  }, 300_000);

  it('refuses before storing anything: a missing file, a directory, one JSON object', async () => {
    const home = tempDir();
    const dir = join(tempDir(), 'preds');
    mkdirSync(dir);
    const object = join(tempDir(), 'preds.json');
    writeFileSync(object, `{\n  "shell-div-zero": ${prediction('shell-div-zero', GOLD)}\n}\n`);
    for (const [args, message] of [
      [
        ['--predictions', join(dir, 'absent.jsonl')],
        /^proctor: --predictions .*absent\.jsonl: ENOENT$/,
      ],
      [['--predictions', dir], /^proctor: --predictions .*preds: not a regular file$/],
      [
        ['--predictions', object],
        /^proctor: --predictions .*preds\.json: a JSON object; expected JSON lines or a JSON array of predictions$/,
      ],
    ] as const) {
      const result = await proctor(['--home', home, 'grade', TASK, ...args]);
      expect(result.code).toBe(2);
      expect(result.stderr.trimEnd()).toMatch(message);
      expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
    }
    expect(readdirSync(home).filter((n) => n === 'artifacts')).toEqual([]);
  });

  it('exits 1 without a batch when every line is skipped', async () => {
    const home = tempDir();
    const preds = file(['not json', prediction('nope', GOLD)]);
    const result = await proctor(['--home', home, 'grade', TASK, '--predictions', preds]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`${preds}:1: skipped: not JSON`);
    expect(result.stderr).toContain(`${preds}:2: skipped: unknown instance_id nope`);
    expect(result.stderr).toContain(`${preds}: no prediction to grade`);
    const status = JSON.parse((await proctor(['--home', home, 'status', '--json'])).stdout) as {
      batches: unknown[];
    };
    expect(status.batches).toEqual([]);
  });
});
