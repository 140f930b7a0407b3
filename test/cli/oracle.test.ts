// `proctor baseline`, `proctor grade` and `proctor worker` end to end: the real binary, a real
// SQLite file, the real Docker engine, and copies of the shell fixture task edited into sound
// and unsound variants.
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { BaselineSummary } from '../../src/results/index.js';
import { proctor } from '../helpers/cli.js';
import { allBytes, leftovers } from '../helpers/home.js';
import { ROOT, spawnTs } from '../helpers/processes.js';
import { tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';

const TASK = join(ROOT, 'test/fixtures/bundles/shell-task');
const GATE = /^tests_hash=[0-9a-f]{64}$/;

/** A suite folder holding copies of the shell task, each edited by its function. */
function suite(bundles: Record<string, (dir: string) => void>): string {
  const root = tempDir();
  for (const [name, edit] of Object.entries(bundles)) {
    const dir = join(root, name);
    cpSync(TASK, dir, { recursive: true });
    edit(dir);
  }
  return root;
}

const write = (dir: string, file: string, text: string) => writeFileSync(join(dir, file), text);
const edit = (dir: string, file: string, from: string | RegExp, to: string) =>
  write(dir, file, readFileSync(join(dir, file), 'utf8').replace(from, to));

interface GradeTimings {
  timings: Record<string, number>;
}

function lastLine(text: string): string {
  return text.trimEnd().split('\n').at(-1) ?? '';
}

describe('proctor baseline', () => {
  it('judges every task of a suite, quarantines the unsound ones with their reason, exit 1', async () => {
    const root = suite({
      a_sound: () => {},
      b_hidden_passes: (dir) => {
        // Only the hidden test that already passes without the fix.
        write(dir, 'tests/hidden.txt', 't_div\n');
        edit(dir, 'task.toml', 'shell-div-zero', 'b-hidden-passes');
      },
      c_existing_fails: (dir) => {
        write(dir, 'tests/existing.txt', 't_add\nt_missing\n');
        edit(dir, 'task.toml', 'shell-div-zero', 'c-existing-fails');
      },
      d_gold_fails: (dir) => {
        edit(dir, 'solution/gold.patch', 'echo error', 'echo oops');
        edit(dir, 'task.toml', 'shell-div-zero', 'd-gold-fails');
      },
      e_hidden_patch_broken: (dir) => {
        edit(dir, 'tests/hidden.patch', /^@@ -0,0 \+1,2 @@/m, '@@ -1,1 +1,2 @@\n-nothing here');
        edit(dir, 'task.toml', 'shell-div-zero', 'e-hidden-patch-broken');
      },
      f_invalid: (dir) => {
        edit(dir, 'task.toml', 'schema = 1', 'schema = 1\nbogus = true');
        edit(dir, 'task.toml', 'shell-div-zero', 'f-invalid');
      },
    });
    const home = tempDir();
    const result = await proctor(['--home', home, 'baseline', root, '--gold', '--wait']);
    expect(result.stderr).toMatch(/skipped .*f_invalid: [\s\S]*bogus: unknown key/);
    const rows = new Map(
      result.stdout
        .split('\n')
        .filter((line) => /^[a-z]/.test(line) && !line.includes(' valid, '))
        .map((line) => [line.split(/\s+/)[0], line] as const),
    );
    expect(rows.get('shell-div-zero')).toMatch(/\svalid\s+PASS\s/);
    expect(rows.get('b-hidden-passes')).toMatch(/\squarantined\s+BASELINE_HIDDEN_PASSED\s/);
    expect(rows.get('c-existing-fails')).toMatch(/\squarantined\s+BASELINE_EXISTING_FAILED\s/);
    expect(rows.get('d-gold-fails')).toMatch(/\squarantined\s+GOLD_FAILED\s/);
    expect(rows.get('e-hidden-patch-broken')).toMatch(
      /\squarantined\s+APPLY_FAILED\s+.*hidden\.patch/,
    );
    expect(result.stdout).toMatch(
      /1 valid, 4 quarantined, 0 not judged, 1 invalid bundle\(s\) skipped/,
    );
    expect(result.code).toBe(1);

    // Validity is kept: status shows it, with the reasons.
    const status = await proctor(['--home', home, 'status']);
    expect(status.stdout).toContain('tasks: 1 valid, 4 quarantined');
    expect(status.stdout).toMatch(/d-gold-fails\s+GOLD_FAILED/);
    const json = JSON.parse((await proctor(['--home', home, 'status', '--json'])).stdout) as {
      tasks: { counts: { valid: number; quarantined: number } };
    };
    expect(json.tasks.counts).toEqual({ valid: 1, quarantined: 4 });
    // Both runs' containers and volumes went after the verdict, off the job's path (no
    // `cleanup` step in either run's timings), and none is left.
    const job = rows.get('shell-div-zero')?.trim().split(/\s+/).at(-1) ?? '';
    const log = (await proctor(['--home', home, 'status', job, '--log'])).stdout;
    const timings = log.split('\n').filter((line) => line.startsWith('timings:'));
    expect(timings).toHaveLength(2);
    for (const line of timings) expect(line).not.toContain('cleanup');
    expect(await leftovers(home)).toEqual([]);
  }, 300_000);

  it('quarantines a task whose declared IDs the report never holds, naming the nearest reported ID', async () => {
    // A JUnit runner that, like pytest, runs a test named by its path but reports it as
    // `classname::name`: `tests/t_div.sh` runs and is reported as `tests::t_div`.
    const junit = (dir: string, existing: string, hidden: string) => {
      write(
        dir,
        'tests/run',
        `#!/bin/sh
list=$1 report=$2
{ echo '<testsuite name="shell">'
while IFS= read -r id; do
  [ -n "$id" ] || continue
  name=\${id#tests::}; name=\${name#tests/}; name=\${name%.sh}
  if sh "tests/$name.sh"; then r=''; else r='<failure message="failed"/>'; fi
  echo "<testcase classname=\\"tests\\" name=\\"$name\\">$r</testcase>"
done < "$list"; echo '</testsuite>'; } > "$report"
`,
      );
      write(dir, 'tests/existing.txt', existing);
      write(dir, 'tests/hidden.txt', hidden);
    };
    const root = suite({
      a_sound: (dir) => {
        junit(dir, 'tests::t_add\ntests::t_add_negative\n', 'tests::t_div\ntests::t_div_zero\n');
        edit(dir, 'task.toml', 'shell-div-zero', 'a-sound');
      },
      b_hidden_paths: (dir) => {
        // Pytest-style node ids: both run (t_div_zero fails, t_div passes), neither is reported.
        junit(
          dir,
          'tests::t_add\ntests::t_add_negative\n',
          'tests/t_div.sh\ntests/t_div_zero.sh\n',
        );
        edit(dir, 'task.toml', 'shell-div-zero', 'b-hidden-paths');
      },
      c_existing_path: (dir) => {
        junit(dir, 'tests::t_add\ntests/t_add_negative.sh\n', 'tests::t_div\ntests::t_div_zero\n');
        edit(dir, 'task.toml', 'shell-div-zero', 'c-existing-path');
      },
    });
    const home = tempDir();
    const result = await proctor(['--home', home, 'baseline', root, '--wait']);
    const rows = new Map(
      result.stdout
        .split('\n')
        .filter((line) => /^[a-z]/.test(line) && !line.includes(' valid, '))
        .map((line) => [line.split(/\s+/)[0], line] as const),
    );
    expect(rows.get('a-sound')).toMatch(/\svalid\s+PASS\s/);
    expect(rows.get('b-hidden-paths')).toMatch(/\squarantined\s+BASELINE_HIDDEN_MISSING\s/);
    expect(rows.get('c-existing-path')).toMatch(/\squarantined\s+BASELINE_EXISTING_MISSING\s/);
    expect(result.stdout).toMatch(/1 valid, 2 quarantined, 0 not judged/);
    expect(result.code).toBe(1);

    // Each missing ID is named with the reported ID nearest to it.
    const status = await proctor(['--home', home, 'status']);
    expect(status.stdout).toContain('tasks: 1 valid, 2 quarantined');
    expect(status.stdout).toMatch(/b-hidden-paths\s+BASELINE_HIDDEN_MISSING\s/);
    expect(status.stdout).toMatch(/c-existing-path\s+BASELINE_EXISTING_MISSING\s/);
    const json = JSON.parse((await proctor(['--home', home, 'status', '--json'])).stdout) as {
      tasks: { tasks: Array<{ taskId: string; reason: string; detail: string }> };
    };
    const detail = (id: string) => json.tasks.tasks.find((t) => t.taskId === id)?.detail;
    expect(detail('b-hidden-paths')).toBe(
      '2 of 2 hidden test IDs not in the base report: tests/t_div.sh (nearest reported: tests::t_div), tests/t_div_zero.sh (nearest reported: tests::t_div_zero)',
    );
    expect(detail('c-existing-path')).toBe(
      '1 of 2 existing test IDs not in the base report: tests/t_add_negative.sh (nearest reported: tests::t_add_negative)',
    );
    expect(await leftovers(home)).toEqual([]);
  }, 300_000);

  it('quarantines a task whose tests flip between repeated runs as FLAKY', async () => {
    const root = suite({
      flaky: (dir) => {
        // Six tests that pass or fail at random: all six agreeing over three runs is 1 in 4096.
        write(
          dir,
          'tests/run',
          `#!/bin/sh
list=$1 report=$2
{ printf '{"schema":1,"tests":['; sep=
while IFS= read -r id; do
  [ -n "$id" ] || continue
  n=$(od -An -N1 -tu1 /dev/urandom | tr -d ' ')
  if [ $((n % 2)) = 0 ]; then s=passed; else s=failed; fi
  case $id in t_add*) s=passed ;; esac
  printf '%s{"id":"%s","status":"%s"}' "$sep" "$id" "$s"; sep=,
done < "$list"; printf ']}\\n'; } > "$report"
`,
        );
        write(dir, 'tests/hidden.txt', 'r1\nr2\nr3\nr4\nr5\nr6\n');
      },
    });
    const home = tempDir();
    const result = await proctor(['--home', home, 'baseline', root, '--repeat', '3', '--wait']);
    expect(result.stdout).toMatch(
      /shell-div-zero\s+quarantined\s+FLAKY\s+hidden tests that flipped: r/,
    );
    expect(result.code).toBe(1);
    expect(await leftovers(home)).toEqual([]);
    // The result records every flipped ID, and the sweep's report counts them.
    const batch = /\(batch (b_[0-9a-z]+)/.exec(result.stdout)?.[1] ?? '';
    const json = await proctor(['--home', home, 'report', batch, '--format', 'json']);
    const sweep = (JSON.parse(json.stdout) as { baselines: BaselineSummary[] }).baselines[0]!;
    const flaky = sweep.perTask.find((t) => t.task === 'shell-div-zero')?.flakyTests ?? [];
    expect(flaky.length).toBeGreaterThan(0);
    expect(flaky.every((id) => /^r[1-6]$/.test(id))).toBe(true);
    expect(sweep.flakyTests.map((f) => f.test).sort()).toEqual([...flaky].sort());
    const table = await proctor(['--home', home, 'report', batch]);
    expect(table.stdout).toMatch(/\n {2}flaky tests {13}in 1 tasks; most often: r\d \(1\)/);
  }, 300_000);

  it('cancels a running baseline within seconds and removes its containers and volumes', async () => {
    const root = suite({
      slow: (dir) => {
        write(dir, 'tests/run', '#!/bin/sh\nsleep 600\n');
        edit(dir, 'task.toml', 'test_seconds = 20', 'test_seconds = 600');
      },
    });
    const home = tempDir();
    const waiting = spawnTs(join(ROOT, 'bin/proctor.js'), [
      '--home',
      home,
      'baseline',
      root,
      '--wait',
    ]);
    await waitFor(async () => (await leftovers(home)).length >= 3, {
      what: 'the evaluator container and its volumes',
      timeoutMs: 60_000,
    });
    const asked = Date.now();
    const cancelled = await proctor(['--home', home, 'cancel', '1']);
    expect(cancelled.code).toBe(0);
    const { code } = await waiting.exited;
    expect(Date.now() - asked).toBeLessThan(15_000);
    expect(code).toBe(1);
    expect(waiting.stdout()).toMatch(/shell-div-zero\s+cancelled/);
    expect(await leftovers(home)).toEqual([]);
  }, 120_000);

  it('only enqueues without --wait, and refuses bad flags with exit 2', async () => {
    const home = tempDir();
    const result = await proctor(['--home', home, 'baseline', TASK]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^batch b_\S+: 1 baseline job\(s\) enqueued$/m);
    const status = await proctor(['--home', home, 'status']);
    expect(status.stdout).toContain('1 queued');
    for (const args of [
      ['--repeat', '0'],
      ['--repeat', 'x'],
      ['--repeat', '21'],
    ]) {
      const bad = await proctor(['--home', home, 'baseline', TASK, ...args]);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toMatch(/--repeat/);
    }
    const missing = await proctor(['--home', home, 'baseline', join(home, 'nope')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^proctor: .*nope/m);
  }, 60_000);
});

describe('proctor grade', () => {
  it('prints the gate line last: exit 0 on PASS with the same tests_hash every time, 1 on FAIL', async () => {
    const home = tempDir();
    const gold = join(TASK, 'solution/gold.patch');
    const first = await proctor(['--home', home, 'grade', TASK, '--patch', gold, '--wait']);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/^job \d+: PASS: 2 existing tests and 2 hidden tests passed$/m);
    expect(lastLine(first.stdout)).toMatch(GATE);
    const second = await proctor(['--home', home, 'grade', TASK, '--patch', gold, '--wait']);
    expect(lastLine(second.stdout)).toBe(lastLine(first.stdout));

    // A candidate that changes nothing useful fails, with the hidden test named.
    const noop = join(tempDir(), 'noop.diff');
    writeFileSync(
      noop,
      readFileSync(gold, 'utf8').replace('echo error; return 0', 'echo nope; return 0'),
    );
    const failed = await proctor(['--home', home, 'grade', TASK, '--patch', noop, '--wait']);
    expect(failed.code).toBe(1);
    expect(failed.stdout).toMatch(
      /FAIL HIDDEN_FAILED: hidden phase: 1 test not passed: t_div_zero/,
    );
    expect(lastLine(failed.stdout)).toBe(lastLine(first.stdout));

    // The oracle log is an artifact and status prints it.
    const id = /^job (\d+):/m.exec(failed.stdout)?.[1] ?? '';
    const log = await proctor(['--home', home, 'status', id, '--log']);
    expect(log.stdout).toMatch(/diff: sha256 [0-9a-f]{64}/);
    expect(log.stdout).toMatch(/image: local_build sha256:/);
    expect(log.stdout).toMatch(/reason: HIDDEN_FAILED/);
    expect(log.stdout).toMatch(/kept lib\.sh/);
    // The job's own steps around the evaluation are timed beside the evaluator's.
    const status = await proctor(['--home', home, 'status', id, '--json']);
    const [row] = (JSON.parse(status.stdout) as { jobs: Array<{ result: GradeTimings }> }).jobs;
    for (const step of ['bundle', 'candidate', 'image', 'record', 'total']) {
      expect(row?.result.timings[step]).toBeGreaterThanOrEqual(0);
    }
    expect(await leftovers(home)).toEqual([]);
  }, 180_000);

  it('says what is wrong, exit 2: no such patch, an invalid bundle, a missing --patch', async () => {
    const home = tempDir();
    const none = await proctor(['--home', home, 'grade', TASK, '--patch', join(home, 'x.diff')]);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/--patch .*x\.diff: ENOENT/);
    const bad = suite({ b: (dir) => edit(dir, 'task.toml', 'schema = 1', 'schema = 2') });
    const invalid = await proctor([
      '--home',
      home,
      'grade',
      join(bad, 'b'),
      '--patch',
      join(TASK, 'solution/gold.patch'),
    ]);
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toMatch(/task\.toml.*schema/);
    const flag = await proctor(['--home', home, 'grade', TASK]);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toMatch(/--patch/);
  }, 60_000);

  it('keeps a planted API key out of containers, the database and every artifact', async () => {
    const key = 'sk-proctorplanted0123456789abcdefXYZ';
    const root = suite({
      leaky: (dir) => {
        // The runner checks the key is not in its environment, then prints it (as a leaky
        // tool would): the oracle log must hold it masked.
        write(
          dir,
          'tests/run',
          `#!/bin/sh
list=$1 report=$2
if env | grep -q proctorplanted; then leaked=failed; else leaked=passed; fi
echo "calling the API with Authorization: Bearer ${key}"
echo "api_key=${key}" >&2
{ printf '{"schema":1,"tests":['; sep=
while IFS= read -r id; do
  [ -n "$id" ] || continue
  if sh "tests/$id.sh"; then s=$leaked; else s=failed; fi
  printf '%s{"id":"%s","status":"%s"}' "$sep" "$id" "$s"; sep=,
done < "$list"; printf ']}\\n'; } > "$report"
`,
        );
      },
    });
    const home = tempDir();
    const env = { OPENAI_API_KEY: key };
    const task = join(root, 'leaky');
    const graded = await proctor(
      ['--home', home, 'grade', task, '--patch', join(task, 'solution/gold.patch'), '--wait'],
      env,
    );
    expect(graded.code).toBe(0);
    const base = await proctor(['--home', home, 'baseline', task, '--gold', '--wait'], env);
    expect(base.code).toBe(0);
    // A candidate carrying the key is refused before anything is stored.
    const carrying = join(tempDir(), 'key.diff');
    writeFileSync(
      carrying,
      readFileSync(join(task, 'solution/gold.patch'), 'utf8').replace('echo error', `echo ${key}`),
    );
    const refused = await proctor(['--home', home, 'grade', task, '--patch', carrying], env);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/contains a provider key/);

    const log = await proctor(['--home', home, 'status', '1', '--log']);
    expect(log.stdout).toContain('Bearer [REDACTED]');
    expect(allBytes(home).includes(key)).toBe(false);
    expect(allBytes(home).includes('proctorplanted')).toBe(false);
  }, 180_000);
});

describe('proctor worker', () => {
  it('serves the home: grade --wait only enqueues and polls; SIGTERM drains, exit 0', async () => {
    const home = tempDir();
    const worker = spawnTs(join(ROOT, 'bin/proctor.js'), [
      '--home',
      home,
      'worker',
      '--grace',
      '5',
    ]);
    await waitFor(() => worker.stderr().includes('ready'), {
      what: 'the worker to start',
      timeoutMs: 30_000,
    });
    const graded = await proctor([
      '--home',
      home,
      'grade',
      TASK,
      '--patch',
      join(TASK, 'solution/gold.patch'),
      '--wait',
    ]);
    expect(graded.code).toBe(0);
    // The worker ran it, not an in-process pool of the grade command.
    expect(worker.stderr()).toMatch(/job done \(job=1 kind=grade/);
    worker.process.kill('SIGTERM');
    expect((await worker.exited).code).toBe(0);
    expect(worker.stderr()).toContain('worker drained');
  }, 120_000);
});
