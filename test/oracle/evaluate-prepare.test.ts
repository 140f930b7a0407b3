// The hidden tests' preparation (src/oracle/evaluate-prepare.ts) and the steps it runs in one
// exec (prepare-steps.ts): PREPARE_SCRIPT in a real container with stand-in steps that print
// what they were given, so that each step's order, arguments, stdin, output, exit and time
// limit are checked apart from git and Python; the JavaScript canaries' write step (the real
// script) in a container; and prepareHiddenRun through the real exec against a container whose
// image has no git or Python, which shows which steps each exec runs and how a step's failure
// is recorded. The real steps run in every grade (hidden-tests, evaluate, canary tests).
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Bundle } from '../../src/oracle/bundle.js';
import {
  commandRecord,
  startPhaseAfterSteps,
  type PhaseContext,
  type StepsBefore,
} from '../../src/oracle/evaluate-phase.js';
import {
  prepareHiddenRun,
  runPrepared as runAfterPreparation,
} from '../../src/oracle/evaluate-prepare.js';
import {
  jsLaterWriteStep,
  jsWriteOutcome,
  jsWriteStep,
  WRITE_SCRIPT,
  type JsWrite,
} from '../../src/oracle/js-canary-step.js';
import {
  PREPARE_STDERR_BYTES,
  prepareCommand,
  readPreparedSteps,
  stepTimedOut,
  type PrepStep,
} from '../../src/oracle/prepare-steps.js';
import { execInContainer } from '../../src/sandbox/index.js';
import { testDocker } from '../helpers/docker.js';

const IMAGE = 'debian:bookworm-slim';
const LABEL = `proctor.test=oracle-evaluate-prepare-${randomBytes(4).toString('hex')}`;
const SLOW = 300_000;

/** A stand-in step: by default it prints its name ($0), its arguments and its stdin. */
function step(name: string, options: Partial<PrepStep> = {}): PrepStep {
  return {
    name,
    script: `printf '%s|' "$0" "$@"; cat`,
    args: [],
    stdin: Buffer.alloc(0),
    timeoutMs: 60_000,
    keepBytes: 64 * 1024,
    stopOnFailure: true,
    ...options,
  };
}

/** Runs `steps` in one exec of PREPARE_SCRIPT in a fresh container, in /srv. */
function prepare(steps: PrepStep[]) {
  const command = prepareCommand(steps);
  if (!Buffer.isBuffer(command.stdin)) throw new Error('a step whose stdin comes later');
  return runPrepared(command.cmd, command.stdin, steps);
}

/** prepare, with a step whose stdin comes later: its bytes made first, then the same run. */
async function prepareLater(steps: PrepStep[]) {
  const command = prepareCommand(steps);
  const input = Buffer.isBuffer(command.stdin) ? command.stdin : await command.stdin();
  return runPrepared(command.cmd, input, steps);
}

function runPrepared(cmd: string[], input: Buffer, steps: PrepStep[]) {
  const result = spawnSync(
    'docker',
    ['run', '--rm', '-i', '--network', 'none', '--label', LABEL, '-w', '/srv', IMAGE, ...cmd],
    { input, encoding: 'utf8', timeout: SLOW, maxBuffer: 64 * 1024 * 1024 },
  );
  expect(result.error).toBeUndefined();
  return {
    status: result.status,
    steps: readPreparedSteps(result.stdout, steps),
    stderr: result.stderr,
  };
}

const text = (buffer: Buffer | undefined) => buffer?.toString('utf8');

describe('readPreparedSteps', () => {
  const frame = (name: string, code: number, out: string, err: string, times = '1000000 3500000') =>
    [
      `proctor-step ${name} ${code} ${times} ${Buffer.byteLength(out)} ${Buffer.byteLength(err)}`,
      Buffer.from(out).toString('base64'),
      '.',
      Buffer.from(err).toString('base64'),
      '.',
    ].join('\n');
  const given = ['hidden_apply', 'canaries', 'test_tree'].map((name) => step(name));

  it('reads each step: its exit, its output, its time in ms', () => {
    const steps = readPreparedSteps(
      `${frame('hidden_apply', 0, '', 'ok\n')}\n${frame('test_tree', 24, 'x', '')}\n`,
      given,
    );
    expect([...steps.keys()]).toEqual(['hidden_apply', 'test_tree']);
    expect(steps.get('hidden_apply')).toMatchObject({ exitCode: 0, ms: 2, stderr: 'ok\n' });
    expect(steps.get('test_tree')).toMatchObject({ exitCode: 24, stderr: '' });
    expect(text(steps.get('test_tree')?.stdout)).toBe('x');
  });

  it('keeps no time when the image gives no nanoseconds', () => {
    const steps = readPreparedSteps(`${frame('test_tree', 0, '', '', '- -')}\n`, given);
    expect(steps.get('test_tree')?.ms).toBeNull();
  });

  it("takes a step's output that spells a frame as output, not as a step", () => {
    const forged = `proctor-step test_tree 0 1 2 0 0\n.\n.\n`;
    const steps = readPreparedSteps(`${frame('canaries', 0, forged, forged)}\n`, given);
    expect([...steps.keys()]).toEqual(['canaries']);
    expect(steps.get('canaries')).toMatchObject({ stderr: forged });
    expect(text(steps.get('canaries')?.stdout)).toBe(forged);
  });

  it('stops at a frame cut short: the steps before it stand', () => {
    const whole = frame('hidden_apply', 0, '', '');
    const cut = frame('canaries', 0, '{"mutants":[]}', 'err').split('\n').slice(0, 3).join('\n');
    const steps = readPreparedSteps(`${whole}\n${cut}`, given);
    expect([...steps.keys()]).toEqual(['hidden_apply']);
    expect(readPreparedSteps('', given).size).toBe(0);
    expect(readPreparedSteps('garbage\n', given).size).toBe(0);
  });

  it('stops at a step it was not given, or one given twice', () => {
    const twice = `${frame('canaries', 0, '', '')}\n${frame('canaries', 1, '', '')}\n`;
    expect([...readPreparedSteps(twice, given).keys()]).toEqual(['canaries']);
    const other = `${frame('canary_write', 0, '', '')}\n${frame('test_tree', 0, '', '')}\n`;
    expect(readPreparedSteps(other, given).size).toBe(0);
  });

  it('says when a step printed more than it keeps', () => {
    const out = `proctor-step test_tree 1 - - 70000 10\n${Buffer.from('a').toString('base64')}\n.\n.\n`;
    expect(readPreparedSteps(out, given).get('test_tree')).toMatchObject({
      truncated: true,
      stdoutBytes: 70000,
    });
    const err = `proctor-step test_tree 1 - - 1 ${PREPARE_STDERR_BYTES + 1}\n.\n.\n`;
    expect(readPreparedSteps(err, given).get('test_tree')?.truncated).toBe(true);
  });
});

describe('prepareCommand', () => {
  it('refuses a step name that is not [a-z_], or one used twice', () => {
    expect(() => prepareCommand([step('Tree')])).toThrow(
      /Expected a step name of \[a-z_\] used once, got `Tree`/,
    );
    expect(() => prepareCommand([step('a b')])).toThrow(/got `a b`/);
    expect(() => prepareCommand([step('a'), step('a')])).toThrow(/used once, got `a`/);
  });

  it('refuses a keep that is not a whole number >= 0, and a timeout that is not > 0', () => {
    expect(() => prepareCommand([step('a', { keepBytes: -1 })])).toThrow(
      'Expected `keepBytes` to be an integer >= 0, got `-1`',
    );
    expect(() => prepareCommand([step('a', { keepBytes: 1.5 })])).toThrow(/got `1.5`/);
    expect(() => prepareCommand([step('a', { timeoutMs: 0 })])).toThrow(
      'Expected `timeoutMs` to be a finite number > 0, got `0`',
    );
    expect(() => prepareCommand([step('a', { timeoutMs: Infinity })])).toThrow(/got `Infinity`/);
  });

  it("bounds the exec by the steps' limits together, and its stdin is their inputs in order", () => {
    const command = prepareCommand([
      step('a', { stdin: Buffer.from('A'), timeoutMs: 1000, keepBytes: 57 }),
      step('b', { stdin: Buffer.from('BB'), timeoutMs: 2500 }),
    ]);
    expect(command.timeoutMs).toBe(3500);
    expect(Buffer.isBuffer(command.stdin) && command.stdin.toString()).toBe('ABB');
    expect(command.outputBytes).toBeGreaterThan(77 + 2 * Math.ceil(PREPARE_STDERR_BYTES / 57) * 77);
  });
});

describe('a step whose stdin comes later', () => {
  it('takes the rest of stdin, after the inputs of the steps before it', async () => {
    const command = prepareCommand([
      step('a', { stdin: Buffer.from('A') }),
      step('b', { stdin: { later: () => Promise.resolve(Buffer.from('LATER')) } }),
      step('c'),
    ]);
    expect(command.cmd.slice(5, 7)).toEqual(['a', '1']);
    expect(command.cmd[command.cmd.indexOf('b') + 1]).toBe('-');
    expect(typeof command.stdin).toBe('function');
    if (typeof command.stdin !== 'function') return;
    expect((await command.stdin()).toString()).toBe('ALATER');
  });

  it('must be the last step with any stdin', () => {
    expect(() =>
      prepareCommand([
        step('a', { stdin: { later: () => Promise.resolve(Buffer.alloc(0)) } }),
        step('b', { stdin: Buffer.from('B') }),
      ]),
    ).toThrow('Expected the step `a`, whose stdin comes later, to be the last with any stdin');
    expect(() =>
      prepareCommand([
        step('a', { stdin: { later: () => Promise.resolve(Buffer.alloc(0)) } }),
        step('b', { stdin: { later: () => Promise.resolve(Buffer.alloc(0)) } }),
      ]),
    ).toThrow(/`a`, whose stdin comes later/);
  });
});

describe('stepTimedOut', () => {
  it('takes a SIGKILL near the end of its seconds for its own limit, and no other exit', () => {
    expect(stepTimedOut({ exitCode: 137, ms: 1950 }, 2000)).toBe(true);
    expect(stepTimedOut({ exitCode: 137, ms: 300 }, 2000)).toBe(false);
    expect(stepTimedOut({ exitCode: 1, ms: 5000 }, 2000)).toBe(false);
    expect(stepTimedOut({ exitCode: 137, ms: null }, 2000)).toBe(false);
  });
});

describe('jsWriteOutcome', () => {
  const writes: JsWrite[] = ['a.test.js', 'b.test.js'].map((file) => ({
    file,
    bytes: Buffer.from('x'),
    mutants: [{ id: `${file}::t again`, test: `${file}::t`, mutation: 'm' }],
    sentinels: (['passed', 'failed'] as const).map((expect) => ({
      id: `${file}::t ${expect}`,
      test: `${file}::t`,
      expect,
      calls: '',
    })),
  }));
  const none = {
    mutants: [],
    uncovered: [],
    sentinels: [],
    sentinelsWhy: 'the files were not written',
    error: null,
  };

  it('keeps the mutants and sentinels of each file written, and names the first that was not, with why', () => {
    const all = jsWriteOutcome(none, writes, {
      exitCode: 0,
      timedOut: false,
      stdout: 'ok\nok\n',
      stderr: '',
    });
    expect(all.mutants.map((m) => m.test)).toEqual(['a.test.js::t', 'b.test.js::t']);
    expect(all.sentinels.map((s) => s.id)).toEqual([
      'a.test.js::t passed',
      'a.test.js::t failed',
      'b.test.js::t passed',
      'b.test.js::t failed',
    ]);
    expect(all).toMatchObject({ error: null, sentinelsWhy: null });
    const one = jsWriteOutcome(none, writes, {
      exitCode: 1,
      timedOut: false,
      stdout: 'ok\n',
      stderr: 'b.test.js is no longer a regular file\n',
    });
    expect(one.mutants.map((m) => m.test)).toEqual(['a.test.js::t']);
    // The pair of the file written stands; the other file's is not judged.
    expect(one.sentinels.map((s) => s.test)).toEqual(['a.test.js::t', 'a.test.js::t']);
    expect(one.sentinelsWhy).toBeNull();
    expect(one.error).toBe('writing b.test.js failed: b.test.js is no longer a regular file');
    const late = jsWriteOutcome(none, writes, {
      exitCode: 137,
      timedOut: true,
      stdout: '',
      stderr: '',
    });
    expect(late).toMatchObject({
      mutants: [],
      sentinels: [],
      sentinelsWhy: 'writing the test files failed',
      error: 'writing a.test.js failed: timed out',
    });
    expect(jsWriteOutcome(none, writes, null).error).toBe(
      'writing a.test.js failed: the step did not run to its end',
    );
  });
});

describe('PREPARE_SCRIPT in a container', { timeout: SLOW }, () => {
  it('runs the steps in order, each with its own arguments and input alone', () => {
    // The last step lists the private folder through its own stdin: the inputs of the steps
    // before it are gone, and nothing else of theirs is there.
    const listing = `printf '%s|' "$0" "$@"; ls "$(dirname "$(readlink /proc/self/fd/0)")" | tr '\\n' ' '`;
    const { status, steps, stderr } = prepare([
      step('first', { args: ['x y', '', '*'], stdin: Buffer.from('ONE') }),
      step('second', { stdin: Buffer.from('TWO\n') }),
      step('third', { script: listing, args: ['1', '2'], stdin: Buffer.from('3') }),
    ]);
    expect(stderr).toBe('');
    expect(status).toBe(0);
    expect([...steps.keys()]).toEqual(['first', 'second', 'third']);
    expect(text(steps.get('first')?.stdout)).toBe('proctor-first|x y||*|ONE');
    expect(text(steps.get('second')?.stdout)).toBe('proctor-second|TWO\n');
    expect(text(steps.get('third')?.stdout)).toBe('proctor-third|1|2|err in2 out ');
    for (const done of steps.values()) {
      expect(done.exitCode).toBe(0);
      expect(done.ms).toBeGreaterThanOrEqual(0);
    }
  });

  it('gives a step whose stdin comes later the rest of stdin, the steps before it their own', async () => {
    const { status, steps } = await prepareLater([
      step('first', { stdin: Buffer.from('ONE') }),
      step('later', { stdin: { later: () => Promise.resolve(Buffer.from('REST\nOF IT')) } }),
      step('none'),
    ]);
    expect(status).toBe(0);
    expect(text(steps.get('first')?.stdout)).toBe('proctor-first|ONE');
    expect(text(steps.get('later')?.stdout)).toBe('proctor-later|REST\nOF IT');
    expect(text(steps.get('none')?.stdout)).toBe('proctor-none|');
  });

  it("keeps each step's stderr apart, and its bytes as they were", () => {
    const { steps } = prepare([
      step('bytes', { script: `printf '\\000\\377a'; echo bad >&2; exit 3`, stopOnFailure: false }),
      step('after', { script: `echo fine` }),
    ]);
    expect([...(steps.get('bytes')?.stdout ?? [])]).toEqual([0, 255, 97]);
    expect(steps.get('bytes')).toMatchObject({ exitCode: 3, stderr: 'bad\n' });
    expect(steps.get('after')).toMatchObject({ exitCode: 0, stderr: '' });
  });

  it('ends at a failed step that stops the exec, and goes past one that does not', () => {
    const stopped = prepare([
      step('apply', { script: 'echo no >&2; exit 10' }),
      step('tree', { script: 'echo ran' }),
    ]);
    expect(stopped.status).toBe(3);
    expect([...stopped.steps.keys()]).toEqual(['apply']);
    expect(stopped.steps.get('apply')).toMatchObject({ exitCode: 10, stderr: 'no\n' });
    const went = prepare([
      step('canaries', { script: 'exit 3', stopOnFailure: false }),
      step('tree', { script: 'echo ran' }),
    ]);
    expect(went.steps.get('canaries')?.exitCode).toBe(3);
    expect(text(went.steps.get('tree')?.stdout)).toBe('ran\n');
  });

  it('kills a step past its seconds, its children with it, then runs the next', () => {
    const started = Date.now();
    const { steps } = prepare([
      step('canaries', {
        script: 'sh -c "sleep 120"; echo survived >&2',
        timeoutMs: 2000,
        stopOnFailure: false,
      }),
      step('tree', { script: 'echo ran' }),
    ]);
    expect(Date.now() - started).toBeLessThan(60_000);
    const killed = steps.get('canaries')!;
    expect(killed.exitCode).toBe(137);
    expect(killed.stderr).not.toContain('survived');
    expect(killed.ms).toBeGreaterThanOrEqual(1900);
    expect(stepTimedOut(killed, 2000)).toBe(true);
    expect(text(steps.get('tree')?.stdout)).toBe('ran\n');
  });

  it('keeps the first bytes a step keeps, and counts the rest', () => {
    const { steps } = prepare([step('loud', { script: 'seq 1 1000', keepBytes: 10 })]);
    expect(text(steps.get('loud')?.stdout)).toBe('1\n2\n3\n4\n5\n');
    expect(steps.get('loud')).toMatchObject({ truncated: true, stdoutBytes: 3893 });
  });
});

describe("the JavaScript canaries' write step in a container", { timeout: SLOW }, () => {
  const writes = (files: string[]): JsWrite[] =>
    files.map((file, i) => ({
      file,
      bytes: Buffer.from(`mutated ${i}\n`),
      mutants: [{ id: `${file}::t again`, test: `${file}::t`, mutation: 'm' }],
      sentinels: [],
    }));
  const setup = (script: string) => step('setup', { script });
  const show = step('show', {
    script: `for f; do stat -c '%a %s' -- "$f"; cat -- "$f"; done`,
    args: ['tests/a.test.js', 'tests/deep/b.test.js', '/tmp/outside/c.test.js'],
    stopOnFailure: false,
  });
  const TREE = `mkdir -p tests/deep /tmp/outside && printf 'old a\\n' > tests/a.test.js && chmod 640 tests/a.test.js && printf 'old b\\n' > tests/deep/b.test.js && printf 'old c\\n' > /tmp/outside/c.test.js`;

  it('writes the files Proctor mutates once the exec has started, and refuses a frame without its length', async () => {
    const all = writes(['tests/a.test.js', 'tests/deep/b.test.js']);
    const later = { ...jsLaterWriteStep('/srv', () => Promise.resolve(all)), stopOnFailure: false };
    const { steps } = await prepareLater([setup(TREE), later, show]);
    expect(steps.get('canary_write')).toMatchObject({ exitCode: 0, stderr: '' });
    expect(text(steps.get('canary_write')?.stdout)).toBe('ok\nok\n');
    expect(text(steps.get('show')?.stdout)).toBe(
      '640 10\nmutated 0\n644 10\nmutated 1\n644 6\nold c\n',
    );
    const none = { ...jsLaterWriteStep('/srv', () => Promise.resolve([])), stopOnFailure: false };
    const empty = await prepareLater([setup(TREE), none, show]);
    expect(empty.steps.get('canary_write')).toMatchObject({ exitCode: 0, stderr: '' });
    expect(text(empty.steps.get('show')?.stdout)).toContain('640 6\nold a\n');
    const bad = step('canary_write', {
      script: WRITE_SCRIPT,
      args: ['/srv'],
      stdin: Buffer.from('six tests/a.test.js\nmutated'),
      stopOnFailure: false,
    });
    const refused = prepare([setup(TREE), bad, show]);
    expect(refused.steps.get('canary_write')).toMatchObject({
      exitCode: 1,
      stderr: 'a write frame without its length\n',
    });
    expect(text(refused.steps.get('show')?.stdout)).toContain('640 6\nold a\n');
  });

  it('writes every file in one step, each in place with its mode', () => {
    const all = writes(['tests/a.test.js', 'tests/deep/b.test.js']);
    const write = { ...jsWriteStep('/srv', all), stopOnFailure: false };
    const { steps } = prepare([setup(TREE), write, show]);
    expect(steps.get('canary_write')).toMatchObject({ exitCode: 0, stderr: '' });
    expect(text(steps.get('show')?.stdout)).toBe(
      '640 10\nmutated 0\n644 10\nmutated 1\n644 6\nold c\n',
    );
    const record = jsWriteOutcome(
      { mutants: [], uncovered: [], sentinels: [], sentinelsWhy: null, error: null },
      all,
      {
        ...steps.get('canary_write')!,
        timedOut: false,
        stdout: text(steps.get('canary_write')?.stdout)!,
      },
    );
    expect(record.mutants).toHaveLength(2);
  });

  it.each([
    ['a link', `ln -s /tmp/outside/c.test.js tests/deep/b.test.js`, 'is no longer a regular file'],
    ['a folder', `mkdir tests/deep/b.test.js`, 'is no longer a regular file'],
    [
      'a file whose folder leads out of the tree',
      `rm -r tests/deep && ln -s /tmp/outside tests/deep && cp /tmp/outside/c.test.js /tmp/outside/b.test.js`,
      'is no longer inside the work tree',
    ],
  ])('refuses a path that became %s, writing nothing from there on', (_, change, why) => {
    const all = writes(['tests/a.test.js', 'tests/deep/b.test.js']);
    const write = { ...jsWriteStep('/srv', all), stopOnFailure: false };
    const { steps } = prepare([
      setup(`${TREE} && rm tests/deep/b.test.js; ${change}`),
      write,
      show,
    ]);
    const done = steps.get('canary_write')!;
    expect(done.exitCode).toBe(1);
    expect(done.stderr).toBe(`tests/deep/b.test.js ${why}\n`);
    expect(text(steps.get('show')?.stdout)).toContain('640 10\nmutated 0\n');
    expect(text(steps.get('show')?.stdout)).toContain('644 6\nold c\n');
    expect(text(steps.get('show')?.stdout)).not.toContain('mutated 1');
    const record = jsWriteOutcome(
      { mutants: [], uncovered: [], sentinels: [], sentinelsWhy: null, error: null },
      all,
      { ...done, timedOut: false, stdout: text(done.stdout)! },
    );
    expect(record.mutants.map((m) => m.test)).toEqual(['tests/a.test.js::t']);
    expect(record.error).toBe(`writing tests/deep/b.test.js failed: tests/deep/b.test.js ${why}`);
  });
});

describe('prepareHiddenRun through the real exec', { timeout: SLOW }, () => {
  const docker = testDocker();
  let container = '';
  const TEST = `const { it } = require('node:test');\nconst assert = require('node:assert');\nit('adds', () => {\n  assert.strictEqual(1 + 1, 2);\n});\n`;
  const ID = 'tests/a.test.js::adds';

  beforeAll(() => {
    const started = spawnSync(
      'docker',
      [
        'run',
        '-d',
        '--network',
        'none',
        '--label',
        LABEL,
        '-w',
        '/srv',
        IMAGE,
        'sleep',
        'infinity',
      ],
      { encoding: 'utf8' },
    );
    expect(started.status).toBe(0);
    container = started.stdout.trim();
  }, SLOW);
  afterAll(() => {
    if (container !== '') spawnSync('docker', ['rm', '-f', container]);
  });

  const shell = (script: string) =>
    execInContainer(docker, container, {
      cmd: ['sh', '-c', script],
      workdir: '/srv',
      timeoutMs: 60_000,
      outputBytes: 64 * 1024,
    });

  /** A phase in the container, whose exec records the steps of each call; `before` runs first. */
  function phase(canaries: boolean, before?: (call: number) => Promise<void>) {
    const calls: string[][] = [];
    const timings: Record<string, number> = {};
    const names = /^(collect|hidden_apply|canaries|canary_read|canary_write|test_tree)$/;
    const context: PhaseContext = {
      docker,
      bundle: {
        workdir: '/srv',
        hiddenIds: [ID],
        existingIds: [],
        limits: { testSeconds: 60, outputBytes: 64 * 1024 },
      } as unknown as Bundle,
      containerId: container,
      exec: async (cmd, timeoutMs, outputBytes = 64 * 1024, options = {}) => {
        await before?.(calls.length);
        calls.push(cmd.filter((arg) => names.test(arg)));
        return execInContainer(docker, container, {
          cmd,
          workdir: '/srv',
          timeoutMs,
          outputBytes,
          ...(options.stdin ? { stdin: options.stdin } : {}),
          ...(options.clockFrom ? { clockFrom: options.clockFrom } : {}),
        });
      },
      timed: async (name, work) => {
        const started = Date.now();
        try {
          return await work();
        } finally {
          timings[name] = (timings[name] ?? 0) + Date.now() - started;
        }
      },
      addTime: (name, ms) => {
        timings[name] = (timings[name] ?? 0) + ms;
      },
      evaluation: { phaseRecords: [] },
      lists: { 'hidden.txt': Buffer.from(`${ID}\n`) },
      patchHeaders: Buffer.alloc(0),
      ...(canaries
        ? { protocol: { phases: {}, collector: Promise.resolve(new Error('no collector')) } }
        : {}),
    };
    return { context, calls, timings };
  }

  /**
   * prepareHiddenRun, then, where its last steps run in the hidden run's exec, that exec (the
   * tree fails in this image, which has no git, so no runner starts): the tree and canaries.
   */
  async function prepareAndRun(
    context: PhaseContext,
    input: Parameters<typeof prepareHiddenRun>[1],
  ) {
    const prepared = await prepareHiddenRun(context, input);
    if (prepared.candidateFailed || prepared.applyFailed !== null) {
      throw new Error('no apply was asked for');
    }
    if ('tree' in prepared.done) {
      return { prepared, tree: prepared.done.tree, canaries: prepared.canaries };
    }
    const ran = await runAfterPreparation(context, prepared, 'hidden', 'hidden.txt', [ID]);
    expect(ran.outcome).toBeNull();
    return { prepared, tree: ran.tree, canaries: ran.canaries };
  }

  /** Every process's command line, a line each. */
  const PROCESSES = `for p in /proc/[0-9]*; do tr '\\000' ' ' < "$p/cmdline" 2> /dev/null; echo; done`;

  const fresh = () =>
    shell(
      `rm -rf /srv/* && mkdir -p /srv/tests /proctor/out && cat > /srv/tests/a.test.js <<'EOF'\n${TEST}EOF`,
    );

  it('reads the JavaScript test files in one exec, and writes them and makes the tree first in the hidden run’s', async () => {
    await fresh();
    const { context, calls, timings } = phase(true);
    const runner = Buffer.from('#!/bin/sh\n# proctor-canaries: js-node\n');
    const { prepared, tree, canaries } = await prepareAndRun(context, {
      runner,
      hiddenPatch: Buffer.alloc(0),
      candidate: true,
    });
    expect(calls).toEqual([['canary_read'], ['canary_write', 'test_tree']]);
    expect(prepared.applyFailed).toBeNull();
    if (prepared.candidateFailed || prepared.applyFailed !== null) return;
    expect(canaries?.error).toBeNull();
    expect(canaries?.mutants.map((m) => m.test)).toEqual([ID]);
    // The mutant sits in the file after the test it copies, under its own title.
    const title = canaries!.mutants[0]!.id.slice('tests/a.test.js::'.length);
    const written = await shell('cat tests/a.test.js');
    expect(written.stdout.startsWith(TEST.trimEnd())).toBe(true);
    expect(written.stdout).toContain(`it('${title}', () => {`);
    // This image has no git: the tree step ran, failed, and says so.
    expect(tree.record.exitCode).not.toBe(0);
    expect(tree.verdict?.reason).toBeDefined();
    expect(timings['canaries']).toBeGreaterThanOrEqual(0);
    expect(timings['hidden_prep']).toBeGreaterThan(0);
  });

  it('writes none when a file became a link between the read and the write, and makes the tree', async () => {
    await fresh();
    const { context, calls } = phase(true, async (call) => {
      if (call === 1) {
        await shell(
          'echo elsewhere > /tmp/elsewhere.js && ln -sf /tmp/elsewhere.js tests/a.test.js',
        );
      }
    });
    const { prepared, tree, canaries } = await prepareAndRun(context, {
      runner: Buffer.from('# proctor-canaries: js-node\n'),
      hiddenPatch: Buffer.alloc(0),
      candidate: true,
    });
    expect(calls).toEqual([['canary_read'], ['canary_write', 'test_tree']]);
    if (prepared.candidateFailed || prepared.applyFailed !== null) {
      throw new Error('no apply was asked for');
    }
    expect(canaries).toMatchObject({
      mutants: [],
      error: 'writing tests/a.test.js failed: tests/a.test.js is no longer a regular file',
    });
    expect((await shell('cat /tmp/elsewhere.js')).stdout).toBe('elsewhere\n');
    expect(tree.record.exitCode).not.toBe(0);
  });

  it('runs a Python runner’s canary step and the tree in one exec; a failed step places none', async () => {
    await fresh();
    const { context, calls } = phase(true);
    const { prepared, tree, canaries } = await prepareAndRun(context, {
      runner: Buffer.from('#!/usr/bin/env python3\n# proctor-canaries: 1\n'),
      hiddenPatch: Buffer.alloc(0),
      candidate: true,
    });
    expect(calls).toEqual([['canaries', 'test_tree']]);
    if (prepared.candidateFailed || prepared.applyFailed !== null) {
      throw new Error('no apply was asked for');
    }
    // No python3 in this image.
    expect(canaries).toMatchObject({ mutants: [] });
    expect(canaries?.error).toMatch(/^the canary step exited with 127: /);
    expect(tree.record.exitCode).not.toBe(0);
  });

  it('runs the tree alone without canaries, and with a JavaScript runner that has no file to read', async () => {
    await fresh();
    const plain = phase(false);
    await prepareHiddenRun(plain.context, {
      runner: Buffer.from('# proctor-canaries: js-node\n'),
      hiddenPatch: Buffer.alloc(0),
      candidate: false,
    });
    expect(plain.calls).toEqual([['test_tree']]);
    const wholeFile = phase(true);
    wholeFile.context.lists = { 'hidden.txt': Buffer.from('tests/a.test.js\n') };
    const prepared = await prepareHiddenRun(wholeFile.context, {
      runner: Buffer.from('# proctor-canaries: js-node\n'),
      hiddenPatch: Buffer.alloc(0),
      candidate: true,
    });
    expect(wholeFile.calls).toEqual([['test_tree']]);
    if (prepared.candidateFailed || prepared.applyFailed !== null) {
      throw new Error('no apply was asked for');
    }
    expect(prepared.canaries?.uncovered).toEqual([
      { test: 'tests/a.test.js', why: 'the id names a whole file' },
    ]);
  });

  it('places no canaries in a run without a diff: a mutant there could catch no candidate', async () => {
    await fresh();
    for (const runner of [
      '#!/usr/bin/env python3\n# proctor-canaries: 1\n',
      '# proctor-canaries: js-node\n',
    ]) {
      const { context, calls } = phase(true);
      const prepared = await prepareHiddenRun(context, {
        runner: Buffer.from(runner),
        hiddenPatch: Buffer.alloc(0),
        candidate: false,
      });
      expect(calls).toEqual([['test_tree']]);
      if (prepared.candidateFailed || prepared.applyFailed !== null) {
        throw new Error('no apply was asked for');
      }
      expect(prepared.canaries).toBeUndefined();
      expect((await shell('cat tests/a.test.js')).stdout).toBe(TEST);
    }
  });

  it('kills every process of the task first when it collects a phase, reads its report, then runs the rest', async () => {
    await fresh();
    const report = JSON.stringify({ schema: 1, tests: [{ id: 't', status: 'passed' }] });
    await shell(`mkdir -p /srv/out && printf '%s' '${report}' > /srv/out/report`);
    const daemon = spawnSync('docker', ['exec', '-d', container, 'sleep', '1234']);
    expect(daemon.status).toBe(0);
    await expect
      .poll(async () => (await shell(PROCESSES)).stdout, {
        timeout: 30_000,
      })
      .toContain('1234');
    const { context, calls, timings } = phase(false);
    const ran = await execInContainer(docker, container, {
      cmd: ['true'],
      timeoutMs: 60_000,
      outputBytes: 1024,
    });
    const started = {
      name: 'existing' as const,
      declared: ['t'],
      canaries: undefined,
      dir: '/srv/out',
      request: null,
      run: ran,
      requested: [],
    };
    const prepared = await prepareHiddenRun(context, {
      runner: Buffer.from('#!/bin/sh\n'),
      hiddenPatch: Buffer.alloc(0),
      candidate: false,
      collect: started,
    });
    expect(calls).toEqual([['collect', 'test_tree']]);
    expect(prepared.collected).toMatchObject({ reportError: null, timedOut: false });
    expect(prepared.collected?.report?.tests.get('t')).toBe('passed');
    expect(context.evaluation.phaseRecords.map((r) => r.name)).toEqual(['existing']);
    expect(timings['collect']).toBeGreaterThanOrEqual(0);
    // The idle process (pid 1) stands; the daemon does not.
    const left = await shell(PROCESSES);
    expect(left.stdout).toContain('sleep infinity');
    expect(left.stdout).not.toContain('sleep 1234');
  });

  it('runs the steps first in the run’s exec: their frames apart, test_seconds from their end, none after a stopping step’s failure', async () => {
    await fresh();
    // The runner: prints its list and what stdin it got, then sleeps (each run sets how
    // long); test_seconds is 1.
    await shell(
      `mkdir -p /proctor/assets && printf '#!/bin/sh\\necho "ran $(cat "$1") [$(cat)]"\\necho said >&2\\nsleep 0\\n' > /proctor/assets/run && chmod +x /proctor/assets/run`,
    );
    const { context, calls, timings } = phase(false);
    context.bundle = {
      ...context.bundle,
      limits: { ...context.bundle.limits, testSeconds: 1 },
    };
    const before = (stop: boolean): StepsBefore => ({
      steps: [
        // The first step takes longer than the run's test_seconds: its time is its own.
        step('first', {
          script: `sleep 1.2; printf '%s|' "$0"; cat`,
          stdin: Buffer.from('ONE'),
        }),
        step('second', {
          script: stop ? 'echo no >&2; exit 4' : `printf '%s|' "$0"; cat`,
          stdin: { later: () => Promise.resolve(Buffer.from('LATER')) },
        }),
      ],
      placing: () => Promise.resolve({ ids: [], sentinelsInFiles: false }),
      finish: (records, whole) =>
        Promise.resolve({
          canaries: undefined,
          tree: { record: records.get('second') ?? commandRecord(whole) },
        }),
    });
    const run = async (stop: boolean, runnerSleep: string) => {
      await shell(`sed -i 's|^sleep .*|sleep ${runnerSleep}|' /proctor/assets/run`);
      return startPhaseAfterSteps(context, 'hidden', 'hidden.txt', [ID], before(stop));
    };
    const quick = await run(false, '0.1');
    expect(calls).toHaveLength(1);
    expect(quick.ran).toBe(true);
    expect(quick.records.get('first')?.stdout).toBe('proctor-first|ONE');
    expect(quick.records.get('second')?.stdout).toBe('proctor-second|LATER');
    expect(quick.records.get('first')?.durationMs).toBeGreaterThanOrEqual(1000);
    // The runner's own output alone (its stdin none: PHASE_SCRIPT gives it /dev/null), and
    // within its test_seconds, counted from the steps' end.
    expect(quick.started.run.stdout).toBe(`ran ${ID} []\n`);
    expect(quick.started.run.stdoutBytes).toBe(Buffer.byteLength(quick.started.run.stdout));
    expect(quick.started.run.stderr).toBe('said\n');
    expect(quick.started.run.timedOut).toBe(false);
    // The job's timing of the run is the exec's wall less the steps', as the run's own time.
    expect(Math.abs(timings['hidden']! - quick.started.run.durationMs)).toBeLessThan(100);
    const slow = await run(false, '30');
    // Killed at its own test_seconds, not 30 s later.
    expect(slow.started.run.timedOut).toBe(true);
    expect(slow.started.run.durationMs).toBeGreaterThanOrEqual(1000);
    expect(slow.started.run.durationMs).toBeLessThan(10_000);
    const stopped = await run(true, '0.1');
    expect(stopped.ran).toBe(false);
    expect(stopped.records.get('second')).toMatchObject({ exitCode: 4, stderr: 'no\n' });
    expect(stopped.started.run.stdout).toBe('');
  });

  it('ends at a hidden test patch that does not apply: no canary step, no tree', async () => {
    await fresh();
    const { context, calls } = phase(true);
    const prepared = await prepareHiddenRun(context, {
      runner: Buffer.from('# proctor-canaries: js-node\n'),
      hiddenPatch: Buffer.from('diff --git a/x b/x\n'),
      candidate: true,
    });
    expect(calls).toEqual([['hidden_apply', 'canary_read']]);
    expect(prepared.applyFailed).not.toBeNull();
    expect(prepared.hiddenApply?.exitCode).not.toBe(0);
  });
});
