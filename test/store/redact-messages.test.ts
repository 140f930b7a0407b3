// Redaction must not eat Proctor's own words. Every verdict and reason detail, solve end,
// stored error and error-table meaning Proctor can produce is made here by the real code
// (verdict rules, the candidate checks, the report parser, the flat solver against a scripted
// model, loadBundle, loadConfig, git itself) from realistic inputs — pytest node ids with `::`
// and parametrize brackets, JUnit classnames, git's apply errors, pytest summaries — and must
// come out of the real redactor unchanged, while the credentials beside them are still masked.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { ERROR_TABLE, ProctorError, describeError, withContext } from '../../src/errors.js';
import { loadBundle, type Bundle } from '../../src/oracle/bundle.js';
import { prepareCandidate, type Evaluation } from '../../src/oracle/evaluate.js';
import { decideImpossibleBaseline } from '../../src/oracle/impossible-verdict.js';
import { renderOracleLog } from '../../src/oracle/oracle-log.js';
import { excerpt, parseReport, type TestStatus } from '../../src/oracle/report.js';
import {
  checkPhase,
  decideBaseline,
  decideGrade,
  failVerdict,
  passVerdict,
  REASONS,
  type GradePhases,
  type PhaseOutcome,
  type Verdict,
} from '../../src/oracle/verdict.js';
import type { AgentRunResult } from '../../src/agents/run.js';
import { agentSolveEnd } from '../../src/solvers/agent.js';
import { createDeadline } from '../../src/solvers/deadline.js';
import { runFlat, type FlatProfile } from '../../src/solvers/flat.js';
import type { ToolSandbox } from '../../src/solvers/tools.js';
import { createSolveMeter } from '../../src/solvers/usage.js';
import {
  createTranscript,
  SOLVE_ENDS,
  solveStopped,
  type SolveEnd,
} from '../../src/solvers/transcript.js';
import { createRedactor, REDACTED } from '../../src/store/index.js';
import type { BaselineResult, GradeResult } from '../../src/workers/oracle-jobs.js';
import type { SolveResult } from '../../src/workers/solve-job.js';
import { copyBundle, SHELL_TASK } from '../helpers/bundles.js';
import { startModelServer, type Step } from '../helpers/model-server.js';
import { tempDir } from '../helpers/temp.js';

const HOME = '/home/alice';
const PROVIDER_KEY = 'canary-7f3a9c2e1b-provider-key';
// As the worker runtime builds it: the user's home and the provider keys it holds.
const redactor = createRedactor({ home: HOME, secrets: [PROVIDER_KEY] });

// ---------------------------------------------------------------------------------------------
// Realistic test IDs: pytest node ids (classes, parametrize brackets with spaces, colons and
// words such as `pass`, `token`, `password`) and JUnit `classname::name`.

const EXISTING = [
  'tests/test_auth.py::TestToken::test_refresh',
  'tests/test_auth.py::TestPassword::test_reset[pass-3]',
  'tests/test_cli.py::test_parse[key: value]',
  'tests/test_session.py::test_session_expires[session: 5 token: abc]',
  'com.example.auth.TokenServiceTest::testRefreshToken',
  'org.acme.PasswordValidatorTest::rejects_short_password',
];
const HIDDEN = [
  'tests/test_secrets.py::test_secret_key_rotation[api_key-None]',
  'tests/test_api.py::TestAuthorization::test_basic_auth[user:pass]',
  'com.example.CredentialsStoreTest::loadsCredentials',
];

const report = (entries: Record<string, TestStatus>) => new Map(Object.entries(entries));
const all = (ids: readonly string[], status: TestStatus) =>
  Object.fromEntries(ids.map((id) => [id, status]));

function ran(declared: readonly string[], entries: Record<string, TestStatus>): PhaseOutcome {
  return {
    timedOut: false,
    oom: false,
    reportError: null,
    check: checkPhase(declared, report(entries)),
  };
}
const unusable = (reportError: string | null, extra: Partial<PhaseOutcome> = {}): PhaseOutcome => ({
  timedOut: false,
  oom: false,
  reportError,
  check: null,
  ...extra,
});

const existingPass = () => ran(EXISTING, all(EXISTING, 'passed'));
const hiddenPass = () => ran(HIDDEN, all(HIDDEN, 'passed'));
const hiddenFail = () => ran(HIDDEN, all(HIDDEN, 'failed'));

/** The message parseReport throws for `text`: what a phase's report error is. */
function reportError(text: string): string {
  try {
    parseReport(Buffer.from(text));
  } catch (error) {
    return describeError(error);
  }
  throw new Error(`parseReport accepted ${text}`);
}

/** Every failure decideGrade can give, each from phases that really lead to it. */
function gradeVerdicts(): Verdict[] {
  const badReports = [
    reportError(
      '{"schema": 1, "tests": [{"id": "tests/test_auth.py::test_token", "status": "pass"}]}',
    ),
    reportError('{"tests": '),
    reportError('<testsuite><testcase classname="com.example.TokenTest" name="x">'),
    reportError('PASSED tests/test_auth.py::test_token'),
  ];
  const phases: GradePhases[] = [
    { existing: existingPass(), hidden: hiddenPass() },
    { existing: unusable(null, { timedOut: true }) },
    { existing: existingPass(), hidden: unusable(null, { oom: true }) },
    ...badReports.map((error) => ({ existing: unusable(error), hidden: hiddenPass() })),
    { existing: existingPass(), hidden: unusable(null) },
    { existing: ran(EXISTING, { [EXISTING[0] ?? '']: 'passed' }), hidden: hiddenPass() },
    {
      existing: ran(EXISTING, {
        ...all(EXISTING, 'passed'),
        [EXISTING[1] ?? '']: 'failed',
        [EXISTING[2] ?? '']: 'error',
        [EXISTING[4] ?? '']: 'skipped',
      }),
      hidden: hiddenPass(),
    },
    { existing: existingPass(), hidden: hiddenFail() },
    { existing: existingPass() },
    // TAMPERED: what checkIntegrity (oracle/protocol.ts) writes, a sentinel and a tripwire.
    {
      existing: {
        ...existingPass(),
        tampered:
          'sentinel doruka_vemi (must be failed) reported passed; sentinel salo_tikune (must be error) reported passed',
      },
      hidden: hiddenPass(),
    },
    {
      existing: existingPass(),
      hidden: {
        ...hiddenPass(),
        tampered:
          'tripwire: _pytest.reports.TestReport.from_item_and_call was replaced (after tests/test_auth.py::test_token)',
      },
    },
  ];
  return phases.map(decideGrade);
}

/** Every quarantine reason and note decideBaseline can give, gold failures included. */
function baselineVerdicts(): Verdict[] {
  const gold = gradeVerdicts();
  const flipped = ran(HIDDEN, { ...all(HIDDEN, 'failed'), [HIDDEN[1] ?? '']: 'passed' });
  const runs: GradePhases[][] = [
    [{ existing: existingPass(), hidden: hiddenFail() }],
    [
      { existing: existingPass(), hidden: hiddenFail() },
      { existing: existingPass(), hidden: flipped },
      { existing: unusable(null, { timedOut: true }) },
    ],
    [{ existing: ran(EXISTING, { ...all(EXISTING, 'passed'), [EXISTING[3] ?? '']: 'failed' }) }],
    [{ existing: existingPass(), hidden: hiddenPass() }],
    [{ existing: existingPass(), hidden: flipped }],
    [{ existing: existingPass() }],
    [{ existing: unusable(null) }],
    // Declared IDs the report never holds, in the format a runner really writes instead.
    [
      {
        existing: ran(EXISTING, {
          ...all(EXISTING.slice(1), 'passed'),
          'tests.test_auth::TestToken::test_refresh': 'passed',
        }),
      },
    ],
    [
      {
        existing: existingPass(),
        hidden: ran(HIDDEN, {
          'tests.test_secrets::test_secret_key_rotation[api_key-None]': 'failed',
        }),
      },
    ],
  ];
  const verdicts = runs.map((r) => decideBaseline({ runs: r }));
  const sound = [
    { existing: existingPass(), hidden: hiddenFail() },
    { existing: existingPass(), hidden: hiddenFail() },
  ];
  // An impossible variant's baseline: its gold patch passes (IMPOSSIBLE_GOLD_PASSED), fails
  // only the contradicted test (valid), or fails elsewhere too (GOLD_FAILED).
  const variant = {
    of: 'auth-token-refresh',
    mode: 'one-off' as const,
    test: HIDDEN[0] ?? '',
    mutation: 'expected value 3600 -> 3607',
  };
  const sane = decideBaseline({ runs: sound });
  const [goldPass] = gold.filter((g) => g.verdict === 'PASS');
  const goldFail = failVerdict('HIDDEN_FAILED', `hidden phase: 1 declared test not passed`);
  verdicts.push(
    decideImpossibleBaseline(sane, variant, {
      verdict: goldPass ?? passVerdict('ok', null),
      failing: [],
    }),
    decideImpossibleBaseline(sane, variant, { verdict: goldFail, failing: [variant.test] }),
    decideImpossibleBaseline(sane, variant, {
      verdict: goldFail,
      failing: [variant.test, EXISTING[0] ?? ''],
    }),
  );
  for (const g of [...gold, failVerdict('CANCELLED', 'the evaluation was cancelled')]) {
    verdicts.push(decideBaseline({ runs: sound, gold: g }));
  }
  return verdicts;
}

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** What `git apply --check` really prints for diffs that do not apply. */
function gitApplyErrors(): string[] {
  const repo = tempDir('proctor-redact-git-');
  git(repo, 'init', '-q');
  mkdirSync(join(repo, 'src/auth'), { recursive: true });
  writeFileSync(join(repo, 'src/auth/token.py'), 'def refresh(token):\n    return token\n');
  const stale = [
    'diff --git a/src/auth/token.py b/src/auth/token.py',
    '--- a/src/auth/token.py',
    '+++ b/src/auth/token.py',
    '@@ -1,2 +1,2 @@',
    ' def refresh(token, password):',
    '-    return token',
    '+    return password',
    '',
  ].join('\n');
  const missing = stale.replaceAll('src/auth/token.py', 'src/auth/password.py');
  const corrupt = stale.split('\n').slice(0, 5).join('\n') + '\n+x\n garbage';
  return [stale, missing, corrupt].map((patch) => {
    const file = join(repo, 'candidate.diff');
    writeFileSync(file, patch);
    const result = spawnSync('git', ['apply', '--check', '--whitespace=nowarn', '--', file], {
      cwd: repo,
      encoding: 'utf8',
    });
    expect(result.status).not.toBe(0);
    // As evaluate.ts's lastLines turns it into a detail: the last lines joined with `; `.
    return excerpt(result.stderr.trim().split('\n').slice(-5).join('; '));
  });
}

/** The verdicts decided before a container exists (prepareCandidate), and APPLY_FAILED. */
async function candidateVerdicts(): Promise<Verdict[]> {
  const bundle = await loadBundle(SHELL_TASK);
  const limited = (limits: Partial<Bundle['limits']>): Bundle => ({
    ...bundle,
    limits: { ...bundle.limits, ...limits },
  });
  const file = (path: string, mode = '100644') =>
    [
      `diff --git a/${path} b/${path}`,
      `new file mode ${mode}`,
      'index 0000000..e69de29',
      '--- /dev/null',
      `+++ b/${path}`,
      '@@ -0,0 +1 @@',
      '+token = "abc"',
      '',
    ].join('\n');
  const twoFiles = Buffer.from(file('src/token.py') + file('src/password.py'));
  const cases: Array<[Bundle, Buffer]> = [
    [limited({ patchBytes: 16 }), twoFiles],
    [limited({ candidateFiles: 1 }), twoFiles],
    [bundle, Buffer.from(file('vendor/auth', '160000'))],
    [bundle, Buffer.from(file('src/secrets', '120000'))],
    [bundle, Buffer.from('diff --git a/x b/x\n@@ -1 +1 @@\npass: 3\n')],
    // The screen's TAMPER_SUSPECTED detail names rules, files and lines.
    [
      { ...bundle, grading: { ...bundle.grading, tamper: 'fail' } },
      Buffer.from(
        file('src/auth/conftest.py') +
          file('src/auth/token_check.py').replace('token = "abc"', 'import _pytest.reports'),
      ),
    ],
  ];
  const verdicts = cases.flatMap(([b, diff]) => {
    const prepared = prepareCandidate(b, diff, Buffer.alloc(0));
    return prepared.verdict ? [prepared.verdict] : [];
  });
  expect(verdicts).toHaveLength(cases.length);
  // evaluate.ts's wording around git's own errors.
  for (const why of gitApplyErrors()) {
    verdicts.push(
      failVerdict('APPLY_FAILED', `the diff does not apply: ${why}`),
      failVerdict('APPLY_FAILED', `tests/hidden.patch does not apply at base_commit: ${why}`),
    );
  }
  verdicts.push(failVerdict('APPLY_FAILED', 'git apply did not finish in time'));
  return verdicts;
}

// ---------------------------------------------------------------------------------------------
// Solve ends: the flat adapter against a scripted model, and the shared stop rules.

const NOWHERE: ToolSandbox = {
  docker: undefined as never,
  containerId: 'proctor-no-such-container',
  workdir: '/repo',
  user: '1000:1000',
  outputBytes: 65_536,
  patchBytes: 1_000_000,
};

async function flatEnd(script: Step[], limits: Partial<FlatProfile> = {}): Promise<SolveEnd> {
  const server = await startModelServer(script);
  const deadline = createDeadline(30_000);
  try {
    return await runFlat({
      profile: {
        baseUrl: server.baseUrl,
        model: 'gpt-test',
        apiKey: PROVIDER_KEY,
        maxTurns: 5,
        maxToolCalls: 5,
        maxTokens: 1_000,
        ...limits,
      },
      prompt: 'Fix the token refresh.',
      meter: createSolveMeter(),
      sandbox: NOWHERE,
      deadline,
      signal: new AbortController().signal,
      transcript: createTranscript(),
    });
  } finally {
    deadline.dispose();
  }
}

async function solveEnds(): Promise<SolveEnd[]> {
  const call = { name: 'run_command', arguments: { command: 'pytest -q', timeout_s: null } };
  const ends = [
    await flatEnd([{ message: 'done' }]),
    await flatEnd([], { maxTurns: 0 }),
    await flatEnd([{ toolCalls: [call] }], { maxToolCalls: 0 }),
    await flatEnd([{ message: 'done', usage: 5_000 }]),
    await flatEnd([{ toolCalls: [call, call] }]),
    await flatEnd([{ toolCalls: [{ name: 'run_command', arguments: '{"command": 5}' }] }]),
    await flatEnd([{ toolCalls: [{ name: 'read_file', arguments: 'pass: 3' }] }]),
    await flatEnd([{ toolCalls: [{ name: 'get_token', arguments: {} }] }]),
    await flatEnd([
      {
        status: 500,
        body: JSON.stringify({
          error: { message: 'The server had an error processing your request' },
        }),
      },
    ]),
    await flatEnd([
      {
        status: 429,
        body: JSON.stringify({ error: { message: 'Rate limit reached for tokens per min' } }),
      },
    ]),
  ];
  const cancelled = new AbortController();
  cancelled.abort();
  const spent = createDeadline(0);
  ends.push(
    solveStopped(cancelled.signal, spent) ?? { reason: 'done', detail: '' },
    solveStopped(new AbortController().signal, spent) ?? { reason: 'done', detail: '' },
  );
  // The codex adapter's ends, as src/solvers/codex/run.ts words them (it needs the pinned
  // codex binary to reach them for real; test/cli/codex.test.ts does that).
  ends.push(
    { reason: 'done', detail: 'codex finished its turn' },
    { reason: 'protocol_error', detail: 'codex 0.1.0 is not the pinned 0.2.0' },
    { reason: 'protocol_error', detail: 'codex login failed: Error: invalid api key format' },
    {
      reason: 'provider_error',
      detail: 'codex audit: turn_failed: stream disconnected before completion',
    },
    {
      reason: 'protocol_error',
      detail: 'codex exited 1: Error: session expired: token refresh failed',
    },
  );
  // The agent adapter's ends, from its own function (src/solvers/agent.ts), over the proxy's
  // stops as src/proxy/budget.ts words them and the agent's outcome classes.
  const run = (outcome: AgentRunResult['outcome'], stderr = ''): AgentRunResult => ({
    outcome,
    exitCode: null,
    durationMs: 10,
    stdout: '',
    stderr,
    stdoutBytes: 0,
    stderrBytes: stderr.length,
    truncated: false,
    logs: [],
  });
  ends.push(
    agentSolveEnd(
      {
        reason: 'BUDGET_EXCEEDED',
        limit: 'tokens',
        detail: 'the agent used 12000 tokens; the solve allows 10000',
      },
      false,
      run({ kind: 'completed' }),
    ),
    agentSolveEnd(
      null,
      false,
      run({ kind: 'crashed', exitCode: 1, oomKilled: false }, 'Error: ENOENT: no such file'),
    ),
    agentSolveEnd(null, false, run({ kind: 'crashed', exitCode: 137, oomKilled: true })),
    agentSolveEnd(null, false, run({ kind: 'output_flood', bytes: 8_388_608 })),
  );
  return ends;
}

// ---------------------------------------------------------------------------------------------
// Stored errors: ProctorError messages from loadBundle and loadConfig, as a job stores them.

async function bundleErrors(): Promise<string[]> {
  const broken = [
    copyBundle({ appendToml: '[tests]\ntoken = "x"\n' }),
    copyBundle({ editToml: (t) => t.replace('test_seconds = 20', 'test_seconds = "pass: 3"') }),
    copyBundle({ editToml: (t) => `${t}\npassword = [` }),
    copyBundle({ editToml: (t) => t.replace(/base_commit = ".*"/, 'base_commit = "main"') }),
  ];
  const dupes = copyBundle();
  writeFileSync(join(dupes, 'tests/hidden.txt'), `${HIDDEN.join('\n')}\n${HIDDEN[0] ?? ''}\n`);
  const empty = copyBundle();
  writeFileSync(join(empty, 'tests/hidden.txt'), '\n');
  const messages: string[] = [];
  for (const dir of [...broken, dupes, empty, join(dupes, 'no-such-bundle')]) {
    try {
      await loadBundle(dir);
      throw new Error(`loadBundle accepted ${dir}`);
    } catch (error) {
      expect(error).toBeInstanceOf(ProctorError);
      const stored = withContext(error, 'cannot load the bundle');
      messages.push((stored as Error).message, describeError(stored));
    }
  }
  return messages;
}

function configErrors(): string[] {
  const tomls = [
    '[solvers.codex]\nadapter = "codex"\nbase_url = "https://api.openai.com/v1"\nmodel = "gpt-5"\napi_key_env = "not a name"\n',
    '[solvers.flat]\nadapter = "flat"\nbase_url = "http://127.0.0.1:8080/v1"\nmodel = "m"\napi_key_env = "OPENAI_API_KEY"\ntoken = "x"\n',
    '[solvers.flat]\nadapter = "flat"\nbase_url = "not a url"\nmodel = "m"\napi_key_env = "K"\nmax_tokens = 0\n',
    '[queue]\nlease_seconds = "pass: 3"\n',
    'password = \n',
  ];
  return tomls.map((toml) => {
    const home = tempDir('proctor-redact-home-');
    writeFileSync(join(home, 'proctor.toml'), toml);
    try {
      loadConfig(home);
    } catch (error) {
      expect(error).toBeInstanceOf(ProctorError);
      return describeError(error);
    }
    throw new Error(`loadConfig accepted ${toml}`);
  });
}

/** An oracle log as the worker stores it, from an evaluation with pytest's own output. */
function oracleLog(verdict: Verdict): string {
  const pytest = [
    '============================= test session starts ==============================',
    'collected 9 items',
    '',
    'tests/test_auth.py::TestToken::test_refresh PASSED                        [ 11%]',
    'tests/test_auth.py::TestPassword::test_reset[pass-3] FAILED               [ 22%]',
    'FAILED tests/test_auth.py::TestPassword::test_reset[pass-3] - AssertionError: assert 3 == 4',
    'E       KeyError: token',
    '=================== 3 passed, 1 failed, 2 skipped in 0.42s ===================',
  ].join('\n');
  const run = {
    exitCode: 1,
    timedOut: false,
    durationMs: 420,
    stdout: pytest,
    stderr: 'warning: pass: 3 deprecated\n',
    stdoutBytes: pytest.length,
    stderrBytes: 28,
    truncated: false,
  };
  const evaluation: Evaluation = {
    verdict,
    phases: null,
    candidate: {
      sha256: 'a'.repeat(64),
      bytes: 812,
      filteredSha256: 'b'.repeat(64),
      filteredBytes: 700,
      kept: ['src/auth/token.py'],
      dropped: ['dropped tests/test_auth.py (denied by tests/**, 2 hunks)'],
      traditional: false,
      suspicious: {
        hits: [
          {
            rule: 'pytest-internals',
            file: 'src/auth/token.py',
            line: 3,
            excerpt: 'from _pytest.reports import TestReport',
          },
          {
            rule: 'conftest',
            file: 'src/auth/conftest.py',
            line: null,
            excerpt: 'src/auth/conftest.py',
          },
        ],
        count: 51,
        unscreened: 1,
      },
    },
    apply: { ...run, exitCode: 0, stdout: '', stderr: '', stdoutBytes: 0, stderrBytes: 0 },
    hiddenApply: null,
    testTree: null,
    phaseRecords: [
      {
        name: 'existing',
        run,
        oomKilled: false,
        report: {
          format: 'junit',
          bytes: 2048,
          readBy: 'exec',
          error: null,
          problems: ['testcase com.example.TokenServiceTest::testRefresh has no time'],
          undeclared: ['tests/test_auth.py::test_token_extra'],
          undeclaredCount: 1,
        },
      },
    ],
    timings: { workspace: 812, apply: 40, existing: 420, total: 1500 },
    tests: { lists: { hidden: 'not_run', existing: 'not_run' }, tests: [] },
  };
  return renderOracleLog({
    kind: 'grade',
    bundle: {
      id: 'auth-token-refresh',
      dir: '/srv/tasks/auth-token-refresh',
      baseCommit: 'c'.repeat(40),
      contentHash: 'd'.repeat(64),
      limits: {
        testSeconds: 600,
        memoryMb: 2048,
        cpus: 2,
        pids: 512,
        outputBytes: 65_536,
      } as Bundle['limits'],
    },
    image: {
      portable: false,
      kind: 'local_build',
      imageId: `sha256:${'e'.repeat(64)}`,
      localId: 'sha256:f',
    },
    runs: [{ title: 'grade', evaluation }],
    verdict,
    startedAt: new Date(0),
    finishedAt: new Date(1500),
  });
}

// ---------------------------------------------------------------------------------------------

describe("redaction and Proctor's own messages", () => {
  it('leaves a GOLD_FAILED detail whole', () => {
    const gold = decideGrade({ existing: ran(EXISTING, { [EXISTING[0] ?? '']: 'failed' }) });
    const verdict = decideBaseline({
      runs: [{ existing: existingPass(), hidden: hiddenFail() }],
      gold,
    });
    expect(verdict.reason).toBe('GOLD_FAILED');
    expect(verdict.detail).toMatch(/^gold patch does not pass: TESTS_MISSING: existing phase: /);
    expect(redactor.text(verdict.detail)).toBe(verdict.detail);
  });

  it('passes every verdict and quarantine detail through unchanged, for every reason', async () => {
    // EMPTY_PATCH is recorded at enqueue by grade --predictions, with one of these details.
    const unrun = ['model_patch is null', 'model_patch is empty'].map((detail) =>
      failVerdict('EMPTY_PATCH', detail),
    );
    const verdicts = [
      ...gradeVerdicts(),
      ...baselineVerdicts(),
      ...(await candidateVerdicts()),
      ...unrun,
    ];
    // A reason added later must get a sample here.
    expect(new Set(verdicts.map((v) => v.reason))).toEqual(new Set(REASONS));
    for (const verdict of verdicts) {
      expect(redactor.text(verdict.detail), verdict.reason).toBe(verdict.detail);
      expect(redactor.text(oracleLog(verdict))).toBe(oracleLog(verdict));
    }
    const sample = verdicts[0] ?? failVerdict('INFRA_ERROR', '');
    const grade: GradeResult = {
      verdict: sample.verdict,
      reason: sample.reason,
      detail: sample.detail,
      testsHash: 'a'.repeat(64),
      task: { id: 'auth-token-refresh', contentHash: 'b'.repeat(64) },
      image: {
        portable: true,
        digest: `sha256:${'c'.repeat(64)}`,
        reference: 'python:3.12',
        localId: 'sha256:d',
      },
      diffSha256: 'e'.repeat(64),
      log: 'art_1',
      timings: { total: 1500 },
    };
    const baseline: BaselineResult = {
      ...grade,
      validity: 'quarantined',
      runs: verdicts.map(({ verdict, reason, detail }) => ({ verdict, reason, detail })),
      gold: { verdict: 'FAIL', reason: 'GOLD_FAILED', detail: verdicts.at(-1)?.detail ?? '' },
      flaky: ['tests/test_clock.py::test_tick[utc-0]', 'Version compare > orders 1.10 after 1.9'],
    };
    expect(redactor.value(grade)).toEqual(grade);
    expect(redactor.value(baseline)).toEqual(baseline);
  });

  it('passes every solve end and solve result through unchanged', async () => {
    const ends = await solveEnds();
    expect(new Set(ends.map((e) => e.reason))).toEqual(new Set(SOLVE_ENDS));
    for (const end of ends) {
      expect(redactor.text(end.detail), end.reason).toBe(end.detail);
      const result: SolveResult = {
        verdict: 'FAIL',
        reason: 'SOLVER_TOKEN_LIMIT',
        detail: end.detail,
        solver: 'flat',
        task: { id: 'auth-token-refresh', contentHash: 'a'.repeat(64) },
        end,
        candidate: { artifact: 'art_2', sha256: 'b'.repeat(64), files: 1, bytes: 812 },
        transcript: 'art_3',
        solveMs: 1200,
        usage: { inputTokens: 1_200_000, cachedInputTokens: 800_000, outputTokens: 42_000 },
        turns: 12,
        toolCalls: 11,
        costUsd: 1.2345,
      };
      expect(redactor.value(result)).toEqual(result);
    }
    // Candidate rejections, as src/sandbox/capture.ts and solve-job.ts word them.
    for (const detail of [
      'patch capture failed: the candidate changes 12 files, more than 10',
      'patch capture failed: symlink not allowed: src/auth/token_link',
      'patch capture failed: gitlink (nested repository) not allowed: vendor/secrets',
      'patch capture failed: mode 100600 not allowed: src/password.py',
      'the candidate patch is larger than patch_bytes (1000000 bytes)',
      'the candidate contains a provider key',
    ]) {
      expect(redactor.text(detail)).toBe(detail);
    }
  });

  it('passes stored errors, bundle and config problems and the error table through unchanged', async () => {
    const messages = [
      ...(await bundleErrors()),
      ...configErrors(),
      ...Object.entries(ERROR_TABLE).map(([code, { meaning }]) => `${code}: ${meaning}`),
      `${'cannot evaluate'}: the evaluator container stopped under the run`,
      'solver codex: the variable OPENAI_API_KEY is not set',
      'the model used 5000 tokens; the profile allows 1000',
    ];
    expect(messages.length).toBeGreaterThan(20);
    for (const message of messages) expect(redactor.text(message)).toBe(message);
  });

  it('still masks the credentials written beside them', () => {
    const cases: Array<[string, string]> = [
      ['password: hunter2hunter2', `password: ${REDACTED}`],
      ['db_password: s3cr3t-Value!', `db_password: ${REDACTED}`],
      ['token=ghp_abcdefghijklmnopqrstuvwxyz0123456789', `token=${REDACTED}`],
      ['PGPASSWORD=123456 psql', `PGPASSWORD=${REDACTED} psql`],
      ['{"api_key": "abc"}', `{"api_key": "${REDACTED}"}`],
      ["api_key: 'sk-live'", `api_key: '${REDACTED}'`],
      ['Authorization: Basic dXNlcjpodW50ZXIy', `Authorization: Basic ${REDACTED}`],
      ['Authorization: Token abc123', `Authorization: Token ${REDACTED}`],
      ['curl -H "Authorization: Bearer abc.def"', `curl -H "Authorization: Bearer ${REDACTED}"`],
      ['https://user:pw@host/x', `https://${REDACTED}@host/x`],
      ['Bearer tokenXyz123', `Bearer ${REDACTED}`],
      ['x-api-key: 9f8e7d6c5b4a3210', `x-api-key: ${REDACTED}`],
      ['secret: Zm9vYmFyYmF6cXV4', `secret: ${REDACTED}`],
      [`the key ${PROVIDER_KEY} leaked`, `the key ${REDACTED} leaked`],
      [`${HOME}/proj/a.py`, '~/proj/a.py'],
      // Inside Proctor's own message, the credential alone goes.
      [
        'gold patch does not pass: EXISTING_FAILED: existing phase: password=hunter2',
        `gold patch does not pass: EXISTING_FAILED: existing phase: password=${REDACTED}`,
      ],
    ];
    for (const [input, expected] of cases) expect(redactor.text(input), input).toBe(expected);
  });

  it('keeps ordinary words and numbers after a sensitive-looking word', () => {
    for (const text of [
      'does not pass: EXISTING_FAILED',
      'pass: 3',
      'tokens: 1234',
      'passes: 2, passed: 3',
      'keys: name, id',
      'token: expired',
      'session: 5',
      'password: required',
      'error: patch failed: src/auth/token.py:12',
      'error: src/auth/password.py: No such file or directory',
      'tests/test_auth.py::TestToken::test_refresh',
      'com.example.auth.PasswordValidatorTest::rejects_short_password',
      '3 passed, 1 failed in 0.12s',
      'a bearer token is required; Bearer auth failed',
    ]) {
      expect(redactor.text(text)).toBe(text);
    }
    expect(redactor.text(`${HOME}/proj/tests/test_auth.py::TestToken::test_refresh`)).toBe(
      '~/proj/tests/test_auth.py::TestToken::test_refresh',
    );
  });
});
