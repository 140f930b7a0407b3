// evaluate() against the real Docker engine, on the shell-task fixture bundle (lib.sh with add
// and div; `div 1 0` crashes; the hidden tests t_div and t_div_zero; a gold patch that fixes
// div): the verdicts of a baseline and of the gold patch, candidates whose code misbehaves
// inside the evaluator (fork bomb, memory hog, output flood, endless loop, detached daemons,
// network, writes outside the workspace, tampering with the assets), the host-side diff
// filter on real grades, hostile and broken reports from a replaced runner, and the runner's
// environment. Every evaluation must remove its own container and volumes before it returns.
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadBundle, type Bundle } from '../../src/oracle/bundle.js';
import { evaluate, type Evaluation, type PhaseRecord } from '../../src/oracle/evaluate.js';
import { renderOracleLog } from '../../src/oracle/oracle-log.js';
import { DEFAULT_REPORT_LIMITS } from '../../src/oracle/report.js';
import { testsHash } from '../../src/oracle/verdict.js';
import { LABEL, requireDocker, resolveImage, type Owner } from '../../src/sandbox/index.js';
import { omittedMarker } from '../../src/sandbox/output-buffer.js';
import {
  FIXED_DIV,
  SHELL_TASK,
  candidateDiff,
  copyBundle,
  shellLib,
  type BundleEdits,
} from '../helpers/bundles.js';
import { dockerScope, testDocker } from '../helpers/docker.js';
import { onCleanup } from '../helpers/temp.js';

const docker = testDocker();
/**
 * Where this file's evaluations are labelled, apart from the other files' (the reaper test in
 * test/sandbox/cleanup.test.ts would otherwise reap an evaluation in flight here); nothing may
 * be left there after the file.
 */
const SCOPE = dockerScope(docker, 'oracle-evaluate');
const SANDBOX = { uid: 1000, gid: 1000 };
/** The limits of the copied bundles: small, so that a misbehaving candidate is stopped soon. */
const SMALL = { test_seconds: 5, memory_mb: 128, pids: 64, output_bytes: 65_536 };
const ALL_IDS = ['t_add', 't_add_negative', 't_div', 't_div_zero'];
const ALL_HASH = testsHash(ALL_IDS);
const BASELINE_DETAIL = 'hidden phase: 1 test not passed: t_div_zero (failed)';
const PASS_DETAIL = '2 existing tests and 2 hidden tests passed';

let imageId: string;
let shellTask: Bundle;
let gold: Buffer;
let originalRunner: string;

beforeAll(async () => {
  await requireDocker(docker);
  shellTask = await loadBundle(SHELL_TASK);
  // A Dockerfile build, cached by the engine; every copy below keeps environment/ unchanged,
  // so this one image serves them all.
  imageId = (await resolveImage(docker, shellTask.environment)).localId;
  gold = readFileSync(shellTask.paths.goldPatch ?? '');
  originalRunner = readFileSync(shellTask.paths.runner, 'utf8');
}, 600_000);

/** Containers and volumes labelled with this owner's job. */
async function owned(owner: Owner): Promise<{ containers: string[]; volumes: string[] }> {
  const label = [`${LABEL.job}=${owner.job}`];
  const containers = await docker.listContainers({ all: true, filters: { label } });
  const { Volumes: volumes } = await docker.listVolumes({ filters: { label } });
  return {
    containers: containers.map((c) => c.Names.join(',')),
    volumes: (volumes ?? []).map((v) => v.Name),
  };
}

/** One evaluation, checked to have removed its container and volumes by itself. */
async function grade(
  bundle: Bundle,
  candidate: Buffer | null,
): Promise<{ evaluation: Evaluation; elapsedMs: number }> {
  const owner = SCOPE.owner();
  const started = Date.now();
  const evaluation = await evaluate(docker, {
    bundle,
    imageId,
    candidate,
    owner,
    sandbox: SANDBOX,
  });
  const elapsedMs = Date.now() - started;
  expect(await owned(owner)).toEqual({ containers: [], volumes: [] });
  expect(evaluation.cleanupError).toBeUndefined();
  return { evaluation, elapsedMs };
}

/** A copy of the shell task with SMALL limits (and `edits`), loaded. */
async function smallTask(edits: BundleEdits = {}): Promise<Bundle> {
  return loadBundle(copyBundle({ ...edits, limits: { ...SMALL, ...edits.limits } }));
}

function phase(evaluation: Evaluation, name: 'existing' | 'hidden'): PhaseRecord {
  const record = evaluation.phaseRecords.find((r) => r.name === name);
  if (!record) throw new Error(`no ${name} phase record`);
  return record;
}

/** A candidate that replaces lib.sh. */
function libCandidate(parts: Parameters<typeof shellLib>[0]): Buffer {
  return candidateDiff({ files: { 'lib.sh': shellLib(parts) } });
}

/** A tests/run: a shell script with `body`. */
const runner = (body: string) => `#!/bin/sh\n${body}\n`;

/**
 * A runner whose every declared test passes when the shell `checks` add nothing to
 * `$problems`; each problem is reported as an undeclared, failed `<prefix>:<problem>` ID.
 */
function checkingRunner(prefix: string, checks: string[]): string {
  return runner(
    [
      'list=$1 report=$2',
      'problems=',
      ...checks,
      'status=passed; [ -z "$problems" ] || status=failed',
      '{',
      `  printf '{"schema":1,"tests":['`,
      '  sep=',
      '  while IFS= read -r id; do',
      '    [ -n "$id" ] || continue',
      `    printf '%s{"id":"%s","status":"%s"}' "$sep" "$id" "$status"; sep=,`,
      '  done < "$list"',
      `  for p in $problems; do printf '%s{"id":"${prefix}:%s","status":"failed"}' "$sep" "$p"; sep=,; done`,
      `  printf ']}\\n'`,
      '} > "$report"',
    ].join('\n'),
  );
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

describe('evaluate: baseline and gold', () => {
  it('fails a baseline run on the hidden tests, with the existing suite passing', async () => {
    const { evaluation } = await grade(shellTask, null);
    expect(evaluation.verdict).toEqual({
      verdict: 'FAIL',
      reason: 'HIDDEN_FAILED',
      detail: BASELINE_DETAIL,
      testsHash: ALL_HASH,
    });
    expect(evaluation.candidate).toBeNull();
    expect(evaluation.apply).toBeNull();
    expect(evaluation.hiddenApply).toMatchObject({ exitCode: 0, timedOut: false });
    expect(evaluation.phases?.existing).toMatchObject({
      timedOut: false,
      oom: false,
      reportError: null,
      check: { ok: true, passed: ['t_add', 't_add_negative'], missing: [], undeclared: [] },
    });
    expect(evaluation.phases?.hidden?.check).toMatchObject({
      ok: false,
      passed: ['t_div'],
      notPassed: [{ id: 't_div_zero', status: 'failed' }],
    });
    expect(evaluation.phaseRecords.map((r) => [r.name, r.report.format, r.report.error])).toEqual([
      ['existing', 'json', null],
      ['hidden', 'json', null],
    ]);
    // The crash of `div 1 0` is in the runner's output, logged and never graded.
    expect(phase(evaluation, 'hidden').run.stderr).toContain('division by zero');
    for (const step of ['workspace', 'container', 'existing', 'hidden', 'cleanup']) {
      expect(evaluation.timings[step]).toBeGreaterThanOrEqual(0);
    }
  });

  it('passes the gold patch, with the same testsHash on every grade', async () => {
    const first = (await grade(shellTask, gold)).evaluation;
    const second = (await grade(shellTask, gold)).evaluation;
    for (const evaluation of [first, second]) {
      expect(evaluation.verdict).toEqual({
        verdict: 'PASS',
        reason: 'PASS',
        detail: PASS_DETAIL,
        testsHash: ALL_HASH,
      });
      expect(evaluation.candidate).toEqual({
        sha256: sha256(gold),
        bytes: gold.length,
        filteredSha256: sha256(gold),
        filteredBytes: gold.length,
        kept: ['lib.sh'],
        dropped: [],
        suspicious: { hits: [], count: 0, unscreened: 0 },
        traditional: false,
      });
      expect(evaluation.apply).toMatchObject({ exitCode: 0, timedOut: false });
    }
    expect(second.verdict.testsHash).toBe(first.verdict.testsHash);
  });
});

describe('evaluate: candidates that misbehave through lib.sh', () => {
  it('holds a fork bomb at the pids limit and times the phase out', async () => {
    const bundle = await smallTask();
    // The classic, in bash (which the image has): when a fork fails, bash retries it with a
    // backoff instead of exiting, so the bombs stay at the limit and $(div 6 3) waits on them.
    const candidate = libCandidate({
      div: `div() { bash -c ':(){ :|:& };:'; echo $(($1 / $2)); }`,
    });
    const { evaluation, elapsedMs } = await grade(bundle, candidate);
    expect(evaluation.verdict).toMatchObject({
      verdict: 'FAIL',
      reason: 'TIMEOUT',
      detail: 'hidden phase exceeded its time limit',
    });
    expect(evaluation.phases?.existing.check?.ok).toBe(true);
    const hidden = phase(evaluation, 'hidden');
    expect(hidden.run.timedOut).toBe(true);
    // Held by the pids limit: forks fail inside the bomb.
    expect(hidden.run.stderr).toContain('fork: retry: Resource temporarily unavailable');
    expect(elapsedMs).toBeLessThan((SMALL.test_seconds + 20) * 1000);
  });

  it('outlives a dash fork bomb, which dies out at the pids limit', async () => {
    const bundle = await smallTask();
    // dash exits when a fork fails, so at the limit the bombs die instead of waiting.
    const candidate = libCandidate({
      prelude: 'bomb() { bomb | bomb & }',
      div: 'div() { bomb; echo $(($1 / $2)); }',
    });
    const { evaluation, elapsedMs } = await grade(bundle, candidate);
    // div itself is not fixed, so the grade fails; how depends on where the pids limit
    // bites on a loaded host: the bomb's test fails, or the runner cannot fork to write its
    // report, or it is held until the time limit.
    expect(evaluation.verdict.verdict).toBe('FAIL');
    expect(['HIDDEN_FAILED', 'REPORT_INVALID', 'TIMEOUT']).toContain(evaluation.verdict.reason);
    expect(phase(evaluation, 'hidden').run.stderr).toMatch(/Cannot fork|fork/i);
    expect(elapsedMs).toBeLessThan((SMALL.test_seconds + 20) * 1000);
  });

  it('survives a test exhausting memory, and runs the next phase in the same container', async () => {
    // Time enough for the OOM kills (about 3 s) on a loaded host.
    const bundle = await smallTask({ limits: { test_seconds: 30 } });
    // The test's shell grows a 300 MB variable under a 128 MiB limit: the OOM killer takes it.
    const candidate = libCandidate({
      add: `add() { x=$(head -c 300000000 /dev/zero | tr '\\0' x); echo $(($1 + $2)); }`,
      div: FIXED_DIV,
    });
    const { evaluation } = await grade(bundle, candidate);
    expect(evaluation.verdict).toMatchObject({
      verdict: 'FAIL',
      reason: 'EXISTING_FAILED',
      detail: 'existing phase: 2 tests not passed: t_add (failed), t_add_negative (failed)',
    });
    const existing = phase(evaluation, 'existing');
    expect(existing.run.stderr).toContain('Killed');
    // Only a test died, not the runner: it wrote its report, and the exec was no OOM kill.
    expect(existing.oomKilled).toBe(false);
    expect(existing.report.error).toBeNull();
    // The container survived: the hidden phase ran, and the fixed div passed it.
    expect(evaluation.hiddenApply?.exitCode).toBe(0);
    expect(evaluation.phases?.hidden?.check).toMatchObject({
      ok: true,
      passed: ['t_div', 't_div_zero'],
    });
  });

  it('gives OOM when the runner itself is killed for memory', async () => {
    const bundle = await smallTask({
      // The OOM kill takes about 2 s; a loaded host may thrash longer before it.
      limits: { test_seconds: 30 },
      runner: originalRunner.replace(
        'list=$1 report=$2',
        `list=$1 report=$2\nhog=$(head -c 300000000 /dev/zero | tr '\\0' x)`,
      ),
    });
    const { evaluation } = await grade(bundle, gold);
    expect(evaluation.verdict).toMatchObject({
      verdict: 'FAIL',
      reason: 'OOM',
      detail: 'existing phase ran out of memory',
    });
    const existing = phase(evaluation, 'existing');
    expect(existing).toMatchObject({ oomKilled: true, run: { exitCode: 137, timedOut: false } });
    expect(existing.report.error).toBe('the runner wrote no report');
    // The container lived on for the hidden phase too.
    expect(phase(evaluation, 'hidden').oomKilled).toBe(true);
  });

  it('keeps a flood of output bounded', async () => {
    const bundle = await smallTask({ limits: { test_seconds: 30 } });
    // A test's stdout is the report (the runner redirects it), so the flood goes to stderr,
    // which is the runner's: 2 × 50 MB.
    const candidate = libCandidate({
      add: 'add() { yes | head -c 50000000 >&2; echo $(($1 + $2)); }',
      div: FIXED_DIV,
    });
    const { evaluation } = await grade(bundle, candidate);
    expect(evaluation.verdict).toMatchObject({ verdict: 'PASS', reason: 'PASS' });
    const { run } = phase(evaluation, 'existing');
    expect(run.stderrBytes).toBe(100_000_000);
    expect(run.truncated).toBe(true);
    expect(run.stderr).toContain(omittedMarker(100_000_000 - SMALL.output_bytes));
    expect(Buffer.byteLength(run.stderr)).toBeLessThanOrEqual(
      SMALL.output_bytes + Buffer.byteLength(omittedMarker(run.stderrBytes)),
    );
    expect(run.stderr.startsWith('y\ny\n')).toBe(true);
  });

  it("refuses a report flooded through the tests' stdout", async () => {
    const bundle = await smallTask({ limits: { test_seconds: 30 } });
    // lib.sh is sourced by each test, whose stdout the fixture's runner sends into the report:
    // the flood fills the report's 64 MiB tmpfs.
    const candidate = libCandidate({ prelude: 'yes | head -c 100000000', div: FIXED_DIV });
    const { evaluation } = await grade(bundle, candidate);
    expect(evaluation.verdict).toMatchObject({ verdict: 'FAIL', reason: 'REPORT_INVALID' });
    expect(evaluation.verdict.detail).toMatch(
      /^existing phase: the report is \d+ bytes; at most 16777216 are read$/,
    );
    const { report } = phase(evaluation, 'existing');
    expect(report.bytes).toBeGreaterThan(DEFAULT_REPORT_LIMITS.maxBytes);
    expect(report.bytes).toBeLessThanOrEqual(64 * 1024 * 1024);
  });

  it('times out an endless loop within test_seconds and a little', async () => {
    const bundle = await smallTask();
    const candidate = libCandidate({ div: 'div() { while :; do :; done; }' });
    const { evaluation, elapsedMs } = await grade(bundle, candidate);
    expect(evaluation.verdict).toMatchObject({
      verdict: 'FAIL',
      reason: 'TIMEOUT',
      detail: 'hidden phase exceeded its time limit',
    });
    const { run } = phase(evaluation, 'hidden');
    expect(run.timedOut).toBe(true);
    expect(run.durationMs).toBeGreaterThanOrEqual(SMALL.test_seconds * 1000);
    expect(run.durationMs).toBeLessThan((SMALL.test_seconds + 3) * 1000);
    expect(elapsedMs).toBeLessThan((SMALL.test_seconds + 10) * 1000);
  });

  // The daemon starts once, while the existing suite runs (add waits until it writes, so a
  // passing existing phase proves it ran); in the hidden phase div fails if it still writes.
  // A PASS thus says the collect step killed it between the phases.
  const daemonCandidate = (start: string) =>
    libCandidate({
      prelude: [
        'if [ ! -e /tmp/daemon-started ]; then',
        '  : > /tmp/daemon-started',
        `  ${start}`,
        'fi',
      ].join('\n'),
      add: [
        'add() {',
        '  n=0; while [ ! -s /tmp/d ] && [ $n -lt 50 ]; do sleep 0.1; n=$((n + 1)); done',
        '  [ -s /tmp/d ] || return 1',
        '  echo $(($1 + $2))',
        '}',
      ].join('\n'),
      div: [
        'div() {',
        '  a=$(wc -c < /tmp/d); sleep 0.5; b=$(wc -c < /tmp/d)',
        '  if [ "$a" != "$b" ]; then echo daemon-alive; return 0; fi',
        '  if [ "$2" -eq 0 ]; then echo error; return 0; fi',
        '  echo $(($1 / $2))',
        '}',
      ].join('\n'),
    });
  const DAEMON_LOOP = `sh -c 'while :; do echo x >> /tmp/d; sleep 0.1; done'`;

  it.each([
    ['setsid, every stream closed', `setsid ${DAEMON_LOOP} </dev/null >/dev/null 2>&1 &`],
    // Clears the exec's token and keeps the exec's stderr stream open.
    ['env -i setsid, stderr kept open', `env -i setsid ${DAEMON_LOOP} </dev/null >/dev/null &`],
  ])('ends a detached daemon (%s) and grades as usual', async (_name, start) => {
    const bundle = await smallTask();
    const { evaluation, elapsedMs } = await grade(bundle, daemonCandidate(start));
    expect(evaluation.verdict).toMatchObject({
      verdict: 'PASS',
      reason: 'PASS',
      detail: PASS_DETAIL,
    });
    const existing = phase(evaluation, 'existing');
    expect(existing.run).toMatchObject({ exitCode: 0, timedOut: false });
    expect(existing.run.durationMs).toBeLessThan(SMALL.test_seconds * 1000);
    expect(elapsedMs).toBeLessThan(20_000);
  });

  it('gives the candidate no network', async () => {
    const bundle = await smallTask();
    const candidate = libCandidate({
      div: [
        'div() {',
        '  if git ls-remote https://example.com/repo.git >/dev/null 2>&1; then echo network; return 0; fi',
        '  echo "probe: git ls-remote failed" >&2',
        '  if getent hosts example.com >/dev/null 2>&1; then echo dns; return 0; fi',
        '  echo "probe: getent failed" >&2',
        `  if awk 'NR > 1 && $2 == "00000000"' /proc/net/route | grep -q .; then echo route; return 0; fi`,
        '  echo "probe: no default route" >&2',
        '  [ "$(ls /sys/class/net)" = lo ] || { echo interfaces; return 0; }',
        '  echo "probe: only lo" >&2',
        '  if [ "$2" -eq 0 ]; then echo error; return 0; fi',
        '  echo $(($1 / $2))',
        '}',
      ].join('\n'),
    });
    const { evaluation } = await grade(bundle, candidate);
    const { stderr } = phase(evaluation, 'hidden').run;
    for (const probe of ['git ls-remote failed', 'getent failed', 'no default route', 'only lo']) {
      expect(stderr).toContain(`probe: ${probe}`);
    }
    expect(evaluation.verdict).toMatchObject({ verdict: 'PASS', reason: 'PASS' });
  });

  it('keeps the root filesystem read-only', async () => {
    const bundle = await smallTask();
    const candidate = libCandidate({
      div: [
        'div() {',
        '  if touch /pwned 2>/dev/null; then echo wrote-root; return 0; fi',
        '  if (echo x >> /etc/passwd) 2>/dev/null; then echo wrote-passwd; return 0; fi',
        '  if mkdir /usr/local/pwned 2>/dev/null; then echo wrote-usr; return 0; fi',
        `  case $(awk '$2 == "/" { print $4 }' /proc/mounts) in ro|ro,*) ;; *) echo root-rw; return 0;; esac`,
        '  echo "probe: root is read-only" >&2',
        '  { : > /tmp/probe && : > ./probe; } || { echo no-scratch; return 0; }',
        '  if [ "$2" -eq 0 ]; then echo error; return 0; fi',
        '  echo $(($1 / $2))',
        '}',
      ].join('\n'),
    });
    const { evaluation } = await grade(bundle, candidate);
    expect(phase(evaluation, 'hidden').run.stderr).toContain('probe: root is read-only');
    // PASS: every write outside /tmp and the workspace failed.
    expect(evaluation.verdict).toMatchObject({ verdict: 'PASS', reason: 'PASS' });
  });

  it('cannot tamper with the runner, the ID lists or the hidden patch', async () => {
    const bundle = await smallTask();
    const candidate = libCandidate({
      add: [
        'add() {',
        '  a=/proctor/assets',
        '  for f in run existing.txt hidden.txt hidden.patch; do',
        '    if (echo "exit 0" > "$a/$f") 2>/dev/null; then echo "wrote-$f"; return 0; fi',
        '  done',
        '  rm -f "$a/hidden.txt" 2>/dev/null; [ -e "$a/hidden.txt" ] || { echo removed; return 0; }',
        '  if chmod 777 "$a/run" 2>/dev/null; then echo chmod; return 0; fi',
        '  if touch "$a/extra" 2>/dev/null; then echo created; return 0; fi',
        '  if mv "$a/hidden.patch" /tmp/ 2>/dev/null; then echo moved; return 0; fi',
        '  echo "probe: assets untouched" >&2',
        '  echo $(($1 + $2))',
        '}',
      ].join('\n'),
      div: FIXED_DIV,
    });
    const { evaluation } = await grade(bundle, candidate);
    expect(phase(evaluation, 'existing').run.stderr).toContain('probe: assets untouched');
    expect(evaluation.verdict).toMatchObject({
      verdict: 'PASS',
      reason: 'PASS',
      detail: PASS_DETAIL,
    });
    // The hidden phase ran the real hidden list and patch.
    expect(evaluation.phases?.hidden?.check?.passed).toEqual(['t_div', 't_div_zero']);
  });
});

describe('evaluate: the diff filter on real grades', () => {
  it('keeps the fix and drops a hidden-test path and a denied path', async () => {
    const candidate = candidateDiff({
      files: {
        'lib.sh': shellLib({ div: FIXED_DIV }),
        // Either would fail the grade if applied: t_add by failing, t_div_zero by making the
        // hidden patch collide with it.
        'tests/t_add.sh': 'exit 1\n',
        'tests/t_div_zero.sh': 'exit 0\n',
      },
    });
    const { evaluation } = await grade(shellTask, candidate);
    expect(evaluation.verdict).toMatchObject({
      verdict: 'PASS',
      reason: 'PASS',
      detail: PASS_DETAIL,
    });
    expect(evaluation.candidate).toMatchObject({
      sha256: sha256(candidate),
      bytes: candidate.length,
      kept: ['lib.sh'],
      dropped: [
        'dropped tests/t_add.sh (denied by tests/**, 1 hunk)',
        'dropped tests/t_div_zero.sh (collides with hidden test path tests/t_div_zero.sh, add, 1 hunk)',
      ],
    });
    expect(evaluation.candidate?.filteredBytes).toBeLessThan(candidate.length);
    expect(evaluation.candidate?.filteredSha256).not.toBe(sha256(candidate));
  });

  it('grades a traditional unified diff (no `diff --git` lines) as the git diff of the same changes', async () => {
    const git = candidateDiff({
      files: { 'lib.sh': shellLib({ div: FIXED_DIV }), 'tests/t_add.sh': 'exit 1\n' },
    }).toString('latin1');
    // As a model writes it: no `diff --git`, `index` or mode lines.
    const candidate = Buffer.from(
      git
        .split('\n')
        .filter((l) => !/^(diff --git |index |new file mode )/.test(l))
        .join('\n'),
      'latin1',
    );
    expect(candidate.includes('diff --git')).toBe(false);
    const { evaluation } = await grade(shellTask, candidate);
    expect(evaluation.verdict).toMatchObject({ verdict: 'PASS', reason: 'PASS' });
    expect(evaluation.candidate).toMatchObject({
      sha256: sha256(candidate),
      traditional: true,
      kept: ['lib.sh'],
      dropped: ['dropped tests/t_add.sh (denied by tests/**, 1 hunk)'],
    });
    const log = renderOracleLog({
      kind: 'grade',
      bundle: shellTask,
      image: { portable: false, kind: 'local_build', imageId, localId: imageId },
      runs: [{ title: 'grade', evaluation }],
      verdict: evaluation.verdict,
      startedAt: new Date(0),
      finishedAt: new Date(1),
    });
    expect(log).toContain(
      'a traditional unified diff (no `diff --git` line): read as the git diff of the same changes',
    );
  });

  it('applies a binary file', async () => {
    const data = Buffer.concat([Buffer.from([0, 1, 2, 255, 0]), randomBytes(3000)]);
    const candidate = candidateDiff({
      files: {
        'data.bin': data,
        'lib.sh': shellLib({
          div: [
            'div() {',
            `  [ "$(sha256sum < data.bin | cut -c1-64)" = ${sha256(data)} ] || { echo bad-binary; return 0; }`,
            '  if [ "$2" -eq 0 ]; then echo error; return 0; fi',
            '  echo $(($1 / $2))',
            '}',
          ].join('\n'),
        }),
      },
    });
    expect(candidate.toString('latin1')).toContain('GIT binary patch');
    const { evaluation } = await grade(shellTask, candidate);
    expect(evaluation.candidate).toMatchObject({ kept: ['data.bin', 'lib.sh'], dropped: [] });
    // PASS: data.bin arrived byte for byte.
    expect(evaluation.verdict).toMatchObject({ verdict: 'PASS', reason: 'PASS' });
  });

  it('applies a rename of lib.sh, and the existing tests fail without it', async () => {
    const candidate = candidateDiff({ renames: [['lib.sh', 'lib2.sh']] });
    expect(candidate.toString()).toContain('rename from lib.sh\nrename to lib2.sh\n');
    const { evaluation } = await grade(shellTask, candidate);
    expect(evaluation.candidate?.kept).toEqual(['lib2.sh']);
    expect(evaluation.apply?.exitCode).toBe(0);
    expect(evaluation.verdict).toMatchObject({
      verdict: 'FAIL',
      reason: 'EXISTING_FAILED',
      detail: 'existing phase: 2 tests not passed: t_add (failed), t_add_negative (failed)',
    });
    expect(phase(evaluation, 'existing').run.stderr).toContain('lib.sh');
  });

  it("fails a diff that does not apply with git's reason", async () => {
    const candidate = Buffer.from(
      gold.toString().replace(' add() { echo $(($1 + $2)); }', ' add() { echo $(($1 - $2)); }'),
    );
    expect(candidate.equals(gold)).toBe(false);
    const { evaluation } = await grade(shellTask, candidate);
    expect(evaluation.verdict).toMatchObject({ verdict: 'FAIL', reason: 'APPLY_FAILED' });
    expect(evaluation.verdict.detail).toMatch(/^the diff does not apply: /);
    expect(evaluation.verdict.detail).toContain('lib.sh: patch does not apply');
    expect(evaluation.apply).toMatchObject({ exitCode: 10, timedOut: false });
    expect(evaluation.phases).toBeNull();
    expect(evaluation.phaseRecords).toEqual([]);
  });

  it('rejects a symlink unless the task allows symlinks', async () => {
    const candidate = candidateDiff({
      files: { 'lib.sh': shellLib({ div: FIXED_DIV }), 'tests-link': { symlink: 'lib.sh' } },
    });
    expect(candidate.toString()).toContain('new file mode 120000');
    const { evaluation, elapsedMs } = await grade(shellTask, candidate);
    expect(evaluation.verdict).toEqual({
      verdict: 'FAIL',
      reason: 'PATCH_REJECTED',
      detail: 'tests-link: symlinks are not allowed (grading.allow_symlinks is false)',
      testsHash: null,
    });
    // Decided on the host: no container, no phase.
    expect(evaluation.phaseRecords).toEqual([]);
    expect(evaluation.timings).toEqual({});
    expect(elapsedMs).toBeLessThan(2_000);

    const allowing = await loadBundle(
      copyBundle({
        editToml: (toml) =>
          toml.replace('deny = ["tests/**"]', 'deny = ["tests/**"]\nallow_symlinks = true'),
      }),
    );
    expect(allowing.grading.allowSymlinks).toBe(true);
    const allowed = (await grade(allowing, candidate)).evaluation;
    expect(allowed.verdict).toMatchObject({ verdict: 'PASS', reason: 'PASS' });
    expect(allowed.candidate?.kept).toEqual(['lib.sh', 'tests-link']);
  });

  it('refuses a diff larger than patch_bytes', async () => {
    const bundle = await smallTask({ limits: { patch_bytes: 1024 } });
    const candidate = libCandidate({ prelude: `# ${'x'.repeat(2000)}`, div: FIXED_DIV });
    const { evaluation } = await grade(bundle, candidate);
    expect(evaluation.verdict).toEqual({
      verdict: 'FAIL',
      reason: 'PATCH_TOO_LARGE',
      detail: `the diff is ${candidate.length} bytes; the task allows 1024 (patch_bytes)`,
      testsHash: null,
    });
    expect(evaluation.candidate).toMatchObject({ bytes: candidate.length, kept: [] });
    expect(evaluation.phaseRecords).toEqual([]);
  });

  it('refuses more files than candidate_files (dropped files not counted)', async () => {
    const bundle = await smallTask({ limits: { candidate_files: 2 } });
    const candidate = candidateDiff({
      files: {
        'lib.sh': shellLib({ div: FIXED_DIV }),
        'a.txt': 'a\n',
        'b.txt': 'b\n',
        'tests/t_add.sh': 'exit 1\n',
      },
    });
    const { evaluation } = await grade(bundle, candidate);
    expect(evaluation.verdict).toEqual({
      verdict: 'FAIL',
      reason: 'PATCH_REJECTED',
      detail: 'the diff changes 3 files; the task allows 2 (candidate_files)',
      testsHash: null,
    });
    expect(evaluation.candidate?.kept).toEqual(['a.txt', 'b.txt', 'lib.sh']);
    expect(evaluation.candidate?.dropped).toHaveLength(1);
    expect(evaluation.phaseRecords).toEqual([]);
  });

  it('grades an empty diff like a baseline', async () => {
    const { evaluation } = await grade(shellTask, Buffer.alloc(0));
    expect(evaluation.verdict).toEqual({
      verdict: 'FAIL',
      reason: 'HIDDEN_FAILED',
      detail: BASELINE_DETAIL,
      testsHash: ALL_HASH,
    });
    expect(evaluation.candidate).toMatchObject({
      bytes: 0,
      filteredBytes: 0,
      kept: [],
      dropped: [],
    });
    expect(evaluation.apply).toBeNull();
  });
});

describe('evaluate: reports from a replaced runner', () => {
  it('gives REPORT_INVALID for malformed JUnit XML', async () => {
    const bundle = await smallTask({
      runner: runner(
        `printf '<testsuite><testcase name="t_add"/><testcase name="t_add_negative">' > "$2"`,
      ),
    });
    const { evaluation } = await grade(bundle, gold);
    expect(evaluation.verdict).toMatchObject({ verdict: 'FAIL', reason: 'REPORT_INVALID' });
    expect(evaluation.verdict.detail).toMatch(
      /^existing phase: invalid test report: malformed XML/,
    );
    expect(phase(evaluation, 'existing').report).toMatchObject({ format: null });
  });

  it('refuses a DOCTYPE with entities (billion laughs) quickly', async () => {
    const entities = ['<!ENTITY lol "lol">'];
    for (let i = 1; i <= 9; i++) {
      const prev = i === 1 ? 'lol' : `lol${i - 1}`;
      entities.push(`<!ENTITY lol${i} "${`&${prev};`.repeat(10)}">`);
    }
    const xml = [
      '<?xml version="1.0"?>',
      `<!DOCTYPE testsuite [${entities.join('')}]>`,
      '<testsuite><testcase name="&lol9;"/></testsuite>',
    ].join('\n');
    const bundle = await smallTask({ runner: runner(`cat > "$2" <<'EOF'\n${xml}\nEOF`) });
    const { evaluation, elapsedMs } = await grade(bundle, gold);
    expect(evaluation.verdict).toMatchObject({
      verdict: 'FAIL',
      reason: 'REPORT_INVALID',
      detail:
        'existing phase: invalid test report: <!DOCTYPE is not allowed: reports may not carry a DTD or entities',
    });
    expect(elapsedMs).toBeLessThan(15_000);
  });

  it('refuses a report over 16 MiB, naming its size', async () => {
    const padding = 17_000_000;
    const bundle = await smallTask({
      limits: { test_seconds: 30 },
      runner: runner(
        `head -c ${padding} /dev/zero | tr '\\0' ' ' > "$2"\nprintf '{"schema":1,"tests":[]}' >> "$2"`,
      ),
    });
    const { evaluation } = await grade(bundle, gold);
    const size = padding + '{"schema":1,"tests":[]}'.length;
    expect(size).toBeGreaterThan(DEFAULT_REPORT_LIMITS.maxBytes);
    expect(evaluation.verdict).toMatchObject({
      verdict: 'FAIL',
      reason: 'REPORT_INVALID',
      detail: `existing phase: the report is ${size} bytes; at most ${DEFAULT_REPORT_LIMITS.maxBytes} are read`,
    });
    expect(phase(evaluation, 'existing').report.bytes).toBe(size);
  });

  it.each([
    ['writes no report', 'exit 0', 'the runner wrote no report'],
    [
      'makes the report a symlink to /etc/passwd',
      'ln -s /etc/passwd "$2"',
      'the report is a symlink, not a file',
    ],
    ['makes the report a directory', 'mkdir "$2"', 'the report is not a regular file'],
    ['makes the report a FIFO', 'mkfifo "$2"', 'the report is not a regular file'],
  ])('gives REPORT_INVALID when the runner %s', async (_what, body, why) => {
    const bundle = await smallTask({ runner: runner(body) });
    const { evaluation } = await grade(bundle, gold);
    expect(evaluation.verdict).toMatchObject({
      verdict: 'FAIL',
      reason: 'REPORT_INVALID',
      detail: `existing phase: ${why}`,
      testsHash: null,
    });
    expect(evaluation.phaseRecords.map((r) => r.report.error)).toEqual([why, why]);
  });

  // The report's exact bytes reach parseReport (base64 in transit), so a bad byte is refused,
  // never repaired into U+FFFD and read as another test ID.
  it('refuses a report that is not valid UTF-8', async () => {
    const bundle = await smallTask({
      runner: runner(
        `printf '{"schema":1,"tests":[{"id":"t_add\\377","status":"passed"}]}' > "$2"`,
      ),
    });
    const { evaluation } = await grade(bundle, gold);
    expect(evaluation.verdict).toMatchObject({
      verdict: 'FAIL',
      reason: 'REPORT_INVALID',
      detail: 'existing phase: invalid test report: report is not valid UTF-8',
    });
  });

  // Runs the tests like the fixture's runner; `extra` is shell code printing more entries
  // (each starting with a comma), `skip` an ID left out of the report.
  const jsonRunner = (options: { extra?: string; skip?: string; after?: string }) =>
    runner(
      [
        'list=$1 report=$2',
        '{',
        `  printf '{"schema":1,"tests":['`,
        '  sep=',
        '  while IFS= read -r id; do',
        '    [ -n "$id" ] || continue',
        `    [ "$id" = "${options.skip ?? ''}" ] && continue`,
        '    if sh "tests/$id.sh"; then status=passed; else status=failed; fi',
        `    printf '%s{"id":"%s","status":"%s"}' "$sep" "$id" "$status"`,
        '    sep=,',
        '  done < "$list"',
        `  ${options.extra ?? ':'}`,
        `  printf ']}\\n'`,
        '} > "$report"',
        options.after ?? '',
      ].join('\n'),
    );

  it('gives TESTS_MISSING when the report omits a declared ID', async () => {
    const bundle = await smallTask({ runner: jsonRunner({ skip: 't_add_negative' }) });
    const { evaluation } = await grade(bundle, gold);
    expect(evaluation.verdict).toEqual({
      verdict: 'FAIL',
      reason: 'TESTS_MISSING',
      detail: 'existing phase: 1 declared test missing from the report: t_add_negative',
      testsHash: testsHash(['t_add', 't_div', 't_div_zero']),
    });
  });

  it("says why there is no report at all with the runner's last lines", async () => {
    const bundle = await smallTask({
      runner: runner(
        "echo 'Traceback (most recent call last):' >&2\necho \"ModuleNotFoundError: No module named 'flask'\" >&2\nexit 1",
      ),
    });
    const { evaluation } = await grade(bundle, gold);
    expect(evaluation.verdict).toMatchObject({
      verdict: 'FAIL',
      reason: 'REPORT_INVALID',
      detail:
        "existing phase: the runner wrote no report; the runner's last lines: Traceback (most recent call last):; ModuleNotFoundError: No module named 'flask'",
    });
  });

  it("quotes the first lines of a report's cause when declared tests are errors", async () => {
    const bundle = await smallTask({
      runner: runner(
        [
          'list=$1 report=$2',
          `printf '{"schema":1,"cause":"ImportError while loading conftest.\\\\nE   No module named flask\\\\nmore","tests":[' > "$report"`,
          'sep=',
          'while IFS= read -r id; do',
          `  [ -n "$id" ] && printf '%s{"id":"%s","status":"error"}' "$sep" "$id" >> "$report" && sep=,`,
          'done < "$list"',
          `printf ']}\\n' >> "$report"`,
        ].join('\n'),
      ),
    });
    const { evaluation } = await grade(bundle, gold);
    expect(evaluation.verdict.reason).toBe('EXISTING_FAILED');
    expect(evaluation.verdict.detail).toBe(
      'existing phase: 2 tests not passed: t_add (error), t_add_negative (error); the runner says: ImportError while loading conftest. | E   No module named flask | more',
    );
  });

  it('ignores undeclared IDs, and lists them', async () => {
    const bundle = await smallTask({
      runner: jsonRunner({
        extra: `printf ',{"id":"undeclared_a","status":"failed"},{"id":"undeclared_b","status":"error"}'`,
      }),
    });
    const { evaluation } = await grade(bundle, gold);
    expect(evaluation.verdict).toEqual({
      verdict: 'PASS',
      reason: 'PASS',
      detail: PASS_DETAIL,
      testsHash: ALL_HASH,
    });
    for (const record of evaluation.phaseRecords) {
      expect(record.report).toMatchObject({
        undeclared: ['undeclared_a', 'undeclared_b'],
        undeclaredCount: 2,
        error: null,
      });
    }
  });

  it("never reads the runner's exit status", async () => {
    const bundle = await smallTask({ runner: jsonRunner({ after: 'exit 3' }) });
    const { evaluation } = await grade(bundle, gold);
    expect(evaluation.verdict).toMatchObject({ verdict: 'PASS', reason: 'PASS' });
    expect(evaluation.phaseRecords.map((r) => r.run.exitCode)).toEqual([3, 3]);
  });

  it('reads a well-formed JUnit XML report', async () => {
    const bundle = await smallTask({
      runner: runner(
        [
          '{',
          `  echo '<?xml version="1.0" encoding="UTF-8"?>'`,
          `  echo '<testsuites><testsuite name="shell">'`,
          '  while IFS= read -r id; do',
          '    [ -n "$id" ] || continue',
          '    if sh "tests/$id.sh" 2>/dev/null; then',
          `      echo "<testcase classname=\\"\\" name=\\"$id\\"><system-out>&lt;ok&gt;</system-out></testcase>"`,
          '    else',
          `      echo "<testcase name=\\"$id\\"><failure message=\\"failed\\"/></testcase>"`,
          '    fi',
          '  done < "$1"',
          `  echo '</testsuite></testsuites>'`,
          '} > "$2"',
        ].join('\n'),
      ),
    });
    const { evaluation } = await grade(bundle, null);
    expect(evaluation.verdict).toEqual({
      verdict: 'FAIL',
      reason: 'HIDDEN_FAILED',
      detail: BASELINE_DETAIL,
      testsHash: ALL_HASH,
    });
    expect(evaluation.phaseRecords.map((r) => r.report.format)).toEqual(['junit', 'junit']);
  });
});

describe("evaluate: the runner's environment", () => {
  it('sets the deterministic variables and [tests].env, and leaks nothing from the host', async () => {
    process.env['PROCTOR_TEST_PLANTED'] = 'planted-value-123';
    onCleanup(() => {
      delete process.env['PROCTOR_TEST_PLANTED'];
    });
    const checks: Array<[string, string]> = [
      ['tz', '[ "$TZ" = UTC ]'],
      ['date_utc', '[ "$(date +%Z)" = UTC ]'],
      ['lc_all', '[ "$LC_ALL" = C.UTF-8 ]'],
      ['pythonhashseed', '[ "$PYTHONHASHSEED" = 0 ]'],
      ['source_date_epoch', '[ "$SOURCE_DATE_EPOCH" = 315532800 ]'],
      ['home', '[ "$HOME" = /proctor/home ]'],
      ['home_writable', 'echo probe > "$HOME/probe" && [ "$(cat "$HOME/probe")" = probe ]'],
      ['planted_value', '! env | grep -q planted-value-123'],
      ['planted_name', '! env | grep -q PROCTOR_TEST_PLANTED'],
      ['tests_env', '[ "$FIXTURE_GREETING" = "hello from task.toml" ]'],
      ['user', '[ "$(id -u):$(id -g)" = 1000:1000 ]'],
      ['cwd', '[ "$(pwd)" = /repo ]'],
    ];
    const bundle = await smallTask({
      appendToml: '[tests]\nenv = { FIXTURE_GREETING = "hello from task.toml" }\n',
      runner: checkingRunner(
        'env',
        checks.map(([name, test]) => `if ! { ${test}; }; then problems="$problems ${name}"; fi`),
      ),
    });
    expect(bundle.testsEnv).toEqual({ FIXTURE_GREETING: 'hello from task.toml' });
    const { evaluation } = await grade(bundle, null);
    expect(evaluation.phaseRecords.map((r) => [r.report.error, r.run.stderr])).toEqual([
      [null, ''],
      [null, ''],
    ]);
    // A failed check shows up as an undeclared `env:<check>` ID.
    expect(evaluation.phaseRecords.map((r) => r.report.undeclared)).toEqual([[], []]);
    expect(evaluation.verdict).toMatchObject({ verdict: 'PASS', reason: 'PASS' });
  });
});

describe('evaluate: where the workspace lives', () => {
  /**
   * A runner whose every test passes when the checkout is the clean tree, owned by the
   * sandbox user, on the file system the task expects (EXPECT_FS: `overlay`, `tmpfs` or `disk`), with the
   * container's memory limit at EXPECT_MEMORY bytes; a failed check is an undeclared ID.
   */
  const probe = checkingRunner('ws', [
    'fs=$(awk -v d="$(pwd)" \'$2 == d { print $3 }\' /proc/mounts)',
    'case "$fs" in tmpfs | overlay) ;; *) fs=disk ;; esac',
    '[ "$fs" = "$EXPECT_FS" ] || problems="$problems fs-$fs"',
    // cgroup v2, or v1.
    'memory=$(cat /sys/fs/cgroup/memory.max 2>/dev/null || cat /sys/fs/cgroup/memory/memory.limit_in_bytes)',
    '[ "$memory" = "$EXPECT_MEMORY" ] || problems="$problems memory-$memory"',
    '[ "$(stat -c %u:%g . lib.sh | sort -u)" = 1000:1000 ] || problems="$problems owner"',
    '[ -z "$(git status --porcelain --untracked-files=no 2>&1 | grep -v "^ M lib.sh")" ] || problems="$problems tree"',
  ]);

  it('is an overlay on the template by default, with the memory limit as the task set it', async () => {
    const bundle = await smallTask({
      runner: probe,
      appendToml: `[tests]\nenv = { EXPECT_FS = "overlay", EXPECT_MEMORY = "${128 * 2 ** 20}" }\n`,
    });
    const { evaluation } = await grade(bundle, gold);
    expect(evaluation.workspace).toEqual({ medium: 'overlay' });
    expect(evaluation.phaseRecords.map((r) => r.report.undeclared)).toEqual([[], []]);
    expect(evaluation.verdict).toMatchObject({ verdict: 'PASS', reason: 'PASS' });
    const log = renderOracleLog({
      kind: 'grade',
      bundle,
      image: { portable: false, kind: 'local_build', imageId, localId: imageId },
      runs: [{ title: 'grade', evaluation }],
      verdict: evaluation.verdict,
      startedAt: new Date(0),
      finishedAt: new Date(1),
    });
    expect(log).toContain('workspace: an overlay on the template (its writes on disk)');
  });

  it('is a memory-backed volume for [environment] workspace = "memory", its tree added to the memory limit', async () => {
    const memory = (toml: string) =>
      toml.replace(/^\[environment\]$/m, '[environment]\nworkspace = "memory"');
    const first = await smallTask({ runner: probe, editToml: memory });
    const treeMb = (await grade(first, null)).evaluation.workspace?.treeMb ?? 0;
    // The tree's MiB (the template's size, with slack) is on top of memory_mb (128).
    expect(treeMb).toBeGreaterThan(0);
    const bundle = await smallTask({
      runner: probe,
      editToml: memory,
      appendToml: `[tests]\nenv = { EXPECT_FS = "tmpfs", EXPECT_MEMORY = "${(128 + treeMb) * 2 ** 20}" }\n`,
    });
    const { evaluation } = await grade(bundle, gold);
    expect(evaluation.workspace).toEqual({ medium: 'memory', treeMb });
    expect(evaluation.phaseRecords.map((r) => r.report.undeclared)).toEqual([[], []]);
    expect(evaluation.verdict).toMatchObject({ verdict: 'PASS', reason: 'PASS' });
    const log = renderOracleLog({
      kind: 'grade',
      bundle,
      image: { portable: false, kind: 'local_build', imageId, localId: imageId },
      runs: [{ title: 'grade', evaluation }],
      verdict: evaluation.verdict,
      startedAt: new Date(0),
      finishedAt: new Date(1),
    });
    expect(log).toContain(
      `workspace: in memory (a tmpfs volume; its ${treeMb} MiB tree added to the memory limit)`,
    );
  });

  it('is on disk, with the memory limit as the task set it, for [environment] workspace = "disk"', async () => {
    const bundle = await smallTask({
      runner: probe,
      appendToml: `[tests]\nenv = { EXPECT_FS = "disk", EXPECT_MEMORY = "${128 * 2 ** 20}" }\n`,
      editToml: (toml) => toml.replace(/^\[environment\]$/m, '[environment]\nworkspace = "disk"'),
    });
    expect(bundle.workspace).toBe('disk');
    const { evaluation } = await grade(bundle, gold);
    expect(evaluation.workspace).toEqual({ medium: 'disk' });
    expect(evaluation.phaseRecords.map((r) => r.report.undeclared)).toEqual([[], []]);
    expect(evaluation.verdict).toMatchObject({ verdict: 'PASS', reason: 'PASS' });
  });

  it('refuses any other [environment] workspace, naming the key', async () => {
    const error = await smallTask({
      editToml: (toml) => toml.replace(/^\[environment\]$/m, '[environment]\nworkspace = "ssd"'),
    }).catch((e: unknown) => e);
    expect(String((error as Error).message)).toMatch(/workspace.*must be "memory" or "disk"/);
  });
});
