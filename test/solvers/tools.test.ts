// The solver's three tools against the real engine: a solver container started idle on a
// fresh workspace of the shell-task fixture (/repo, uid:gid 1000:1000), as a solve job makes
// it. Ordinary calls, and the model's mistakes and tricks: commands that hang, flood or
// outlive the deadline, reads through symlinks, `..`, directories and FIFOs, patches that do
// not apply or are too big, and arguments that are not what the schema says.
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { isProctorError } from '../../src/errors.js';
import { requireDocker } from '../../src/sandbox/index.js';
import {
  TOOL_DEFINITIONS,
  TOOL_NAMES,
  ToolArgumentsError,
  callTool,
  createDeadline,
  type Deadline,
  type ToolSandbox,
} from '../../src/solvers/index.js';
import { SHELL_TASK, candidateDiff } from '../helpers/bundles.js';
import { dockerScope, testDocker } from '../helpers/docker.js';
import { shellTask, solverSandbox } from '../helpers/solver.js';
import { onCleanup } from '../helpers/temp.js';

const docker = testDocker();
/** Where this file's solver sandboxes are labelled; nothing may be left there after it. */
const WHERE = dockerScope(docker, 'solver-tools');
const LIB = readFileSync(`${SHELL_TASK}/environment/repo/lib.sh`, 'utf8');

beforeAll(async () => {
  await requireDocker(docker);
  await shellTask(); // builds the image once, outside any test's timeout
}, 600_000);

/** A sandbox whose container does not exist: any exec would throw DOCKER_ERROR. */
const NOWHERE: ToolSandbox = {
  docker,
  containerId: 'proctor-no-such-container',
  workdir: '/repo',
  user: '1000:1000',
  outputBytes: 65_536,
  patchBytes: 1024,
};

function budget(ms = 60_000): Deadline {
  const deadline = createDeadline(ms);
  onCleanup(() => deadline.dispose());
  return deadline;
}

/** One call with its arguments as the model would send them; `content` parsed. */
async function call(
  sandbox: ToolSandbox,
  name: string,
  args: unknown,
  deadline = budget(),
  signal?: AbortSignal,
) {
  const result = await callTool(sandbox, name, JSON.stringify(args), deadline, signal);
  expect(result.summary.length).toBeLessThan(400);
  return { ...result, content: JSON.parse(result.content) as Record<string, unknown> };
}

const run = (sandbox: ToolSandbox, command: string, timeout_s: number | null = null) =>
  call(sandbox, 'run_command', { command, timeout_s });
/** How many `sleep 100` processes live in the container (debian-slim has no ps). */
async function sleepers(sandbox: ToolSandbox): Promise<string> {
  const scan = `for d in /proc/[0-9]*; do tr '\\0' ' ' < $d/cmdline; echo; done 2>/dev/null`;
  return (await run(sandbox, `${scan} | grep -c '^sleep 100 ' || true`)).content.stdout as string;
}

const read = (sandbox: ToolSandbox, path: string, offset: number | null = null, limit = null) =>
  call(sandbox, 'read_file', { path, offset, limit });

/** How late a killed command may end, on a loaded machine: far from the 100 s it would run. */
const KILL_SLACK_MS = 10_000;

describe('run_command', () => {
  it('returns the exit code, stdout and stderr of a command run as the task user in the workdir', async () => {
    const sandbox = await solverSandbox(WHERE);
    const result = await run(sandbox, 'id -u; id -g; pwd; echo oops >&2; exit 3');
    expect(result.ok).toBe(true);
    expect(result.content).toEqual({
      exit_code: 3,
      timed_out: false,
      stdout: '1000\n1000\n/repo\n',
      stderr: 'oops\n',
      truncated: false,
    });
    expect(result.summary).toBe(
      'run_command "id -u; id -g; pwd; echo oops >&2; exit 3": exit 3, 16 B stdout, 5 B stderr',
    );
  });

  it('kills a command at its timeout_s and says it timed out', async () => {
    const sandbox = await solverSandbox(WHERE);
    // A detached one outlives its command (by design: only a timeout or a cancel kills).
    await run(sandbox, 'setsid sleep 100 >/dev/null 2>&1 &');
    expect(await sleepers(sandbox)).toBe('1\n');
    const started = Date.now();
    const result = await run(sandbox, 'sleep 100 & sleep 100', 0.5);
    // Killed at its timeout, not after its 100 s. The kill is an exec of its own, which the
    // engine can take seconds to start on a loaded machine (4.6 s once, at load 5 on 2 cores).
    expect(Date.now() - started).toBeLessThan(500 + KILL_SLACK_MS);
    expect(result.ok).toBe(true);
    expect(result.content).toMatchObject({ timed_out: true });
    expect(await sleepers(sandbox)).toBe('1\n');
  });

  it('keeps at most output_bytes of each stream, head and tail, and says it truncated', async () => {
    const sandbox = await solverSandbox(WHERE, { outputBytes: 1000 });
    const result = await run(sandbox, 'yes | head -c 1000000; yes no | head -c 5000 >&2');
    expect(result.content).toMatchObject({ exit_code: 0, truncated: true });
    const { stdout, stderr } = result.content as { stdout: string; stderr: string };
    expect(stdout).toContain('…[999000 bytes omitted]…');
    expect(stdout).toMatch(/^(y\n){250}\n…/);
    expect(stderr).toContain('…[4000 bytes omitted]…');
    expect(stdout.length + stderr.length).toBeLessThan(2200);
  });

  it('stops a command at the solver deadline whatever its timeout_s, and then starts nothing', async () => {
    const sandbox = await solverSandbox(WHERE);
    const deadline = budget(1500);
    const started = Date.now();
    // As the adapter does: one signal for the job's cancel and the deadline.
    const signal = AbortSignal.any([new AbortController().signal, deadline.signal]);
    const result = await call(
      sandbox,
      'run_command',
      { command: 'sleep 100', timeout_s: 3600 },
      deadline,
      signal,
    );
    expect(Date.now() - started).toBeLessThan(1500 + KILL_SLACK_MS);
    expect(deadline.expired()).toBe(true);
    // Whichever stopped it first, the exec's time limit or the signal, the deadline is named.
    if (result.ok) expect(result.content).toMatchObject({ timed_out: true });
    else expect(result.content).toEqual({ error: 'solver deadline reached' });
    // Past the deadline nothing runs: NOWHERE has no container, so an exec would throw.
    for (const [name, args] of [
      ['run_command', { command: 'true', timeout_s: null }],
      ['read_file', { path: 'lib.sh', offset: null, limit: null }],
      ['apply_patch', { patch: 'x' }],
    ] as const) {
      expect(await call(NOWHERE, name, args, deadline)).toMatchObject({
        ok: false,
        content: { error: 'solver deadline reached' },
      });
    }
  });

  it('kills the command in flight when the signal aborts', async () => {
    const sandbox = await solverSandbox(WHERE);
    const cancel = new AbortController();
    let aborted = 0;
    const timer = setTimeout(() => {
      aborted = Date.now();
      cancel.abort();
    }, 300);
    onCleanup(() => clearTimeout(timer));
    const result = await call(
      sandbox,
      'run_command',
      { command: 'sleep 100', timeout_s: null },
      budget(),
      cancel.signal,
    );
    // Back long before the command's 100 s, counted from the abort: the exec's own start and
    // the kill's round trips take seconds when the machine is loaded (3.0 s once in CI).
    expect(aborted).toBeGreaterThan(0);
    expect(Date.now() - aborted).toBeLessThan(10_000);
    expect(result).toMatchObject({ ok: false, content: { error: 'cancelled' } });
    expect(await sleepers(sandbox)).toBe('0\n');
  });
});

describe('read_file', () => {
  it('reads a file by a relative or an absolute path, and pages with offset and limit', async () => {
    const sandbox = await solverSandbox(WHERE, { outputBytes: 40 });
    const whole = {
      content: LIB,
      bytes_read: LIB.length,
      total_bytes: LIB.length,
      truncated: false,
    };
    expect(LIB.length).toBe(80);
    const full = await call(sandbox, 'read_file', { path: 'lib.sh', offset: null, limit: 100 });
    // limit is capped by output_bytes (40 here).
    expect(full).toMatchObject({
      ok: true,
      content: { content: LIB.slice(0, 40), bytes_read: 40, truncated: true },
    });
    expect((await read(sandbox, '/repo/lib.sh', 40)).content).toEqual({
      content: LIB.slice(40, 80), // the rest: LIB is 80 bytes
      bytes_read: 40,
      total_bytes: LIB.length,
      truncated: false,
    });
    const tail = await call(sandbox, 'read_file', {
      path: './tests/../lib.sh',
      offset: 2,
      limit: 9,
    });
    expect(tail.content).toEqual({
      ...whole,
      content: 'Arithmeti',
      bytes_read: 9,
      truncated: true,
    });
    expect((await read(sandbox, 'lib.sh', 1000)).content).toMatchObject({
      content: '',
      bytes_read: 0,
      truncated: false,
    });
  });

  it('follows a symlink inside the workspace and refuses every path that resolves outside it', async () => {
    const sandbox = await solverSandbox(WHERE);
    await run(sandbox, 'ln -s /etc/passwd passwd && ln -s lib.sh alias && ln -s / root');
    expect((await read(sandbox, 'alias')).content).toMatchObject({ content: LIB });
    for (const path of ['passwd', '../etc/passwd', '/etc/passwd', 'root/etc/passwd', '/repo/..']) {
      const result = await read(sandbox, path);
      expect(result.ok).toBe(false);
      expect(result.content.error).toMatch(/outside the workspace \/repo$/);
    }
  });

  it('refuses a directory, a FIFO (without opening it) and a missing file', async () => {
    const sandbox = await solverSandbox(WHERE);
    await run(sandbox, 'mkfifo pipe');
    const started = Date.now();
    expect((await read(sandbox, 'pipe')).content).toEqual({
      error: 'pipe is not a regular file but a fifo',
    });
    expect(Date.now() - started).toBeLessThan(2000);
    expect((await read(sandbox, 'tests')).content).toEqual({
      error: 'tests is not a regular file but a directory',
    });
    expect((await read(sandbox, '.')).content.error).toMatch(/not a regular file/);
    expect((await read(sandbox, 'nope.sh')).content).toEqual({ error: 'no such file: nope.sh' });
    expect((await read(sandbox, 'lib\0.sh')).ok).toBe(false);
  });

  it('returns bytes that are not UTF-8 as replacement characters, counting the bytes', async () => {
    const sandbox = await solverSandbox(WHERE);
    await run(sandbox, "printf 'a\\377b' > binary");
    expect((await read(sandbox, 'binary')).content).toEqual({
      content: 'a\uFFFDb',
      bytes_read: 3,
      total_bytes: 3,
      truncated: false,
    });
  });
});

describe('apply_patch', () => {
  it('applies a real diff, lists its files, and git diff shows the change', async () => {
    const sandbox = await solverSandbox(WHERE);
    const patch = candidateDiff({
      files: { 'lib.sh': `${LIB}sub() { echo $(($1 - $2)); }\n`, 'docs/new file.md': 'hi\n' },
      renames: [['tests/t_add.sh', 'tests/t_plus.sh']],
    }).toString('utf8');
    const result = await call(sandbox, 'apply_patch', { patch });
    expect(result).toMatchObject({ ok: true });
    expect(result.content).toEqual({
      applied: true,
      files: ['docs/new file.md', 'lib.sh', 'tests/t_plus.sh'],
    });
    const diff = await run(sandbox, 'git diff; git status --porcelain');
    expect(diff.content.stdout).toContain('+sub() { echo $(($1 - $2)); }');
    expect(diff.content.stdout).toContain(' D tests/t_add.sh\n?? docs/\n?? tests/t_plus.sh\n');
  });

  it('refuses a diff that does not apply, with git’s reason, and changes nothing', async () => {
    const sandbox = await solverSandbox(WHERE);
    const good = candidateDiff({ files: { 'lib.sh': '# replaced\n' } }).toString('utf8');
    // The first file's hunk applies; the second's context is wrong, so neither may change.
    const bad = `${good}diff --git a/tests/t_add.sh b/tests/t_add.sh
--- a/tests/t_add.sh
+++ b/tests/t_add.sh
@@ -1 +1 @@
-not the line that is there
+anything
`;
    const result = await call(sandbox, 'apply_patch', { patch: bad });
    expect(result.ok).toBe(false);
    expect(result.content.error).toBe('the patch does not apply; nothing changed');
    expect(result.content.stderr).toMatch(/tests\/t_add\.sh: patch does not apply/);
    expect((await run(sandbox, 'git status --porcelain')).content.stdout).toBe('');
    expect((await call(sandbox, 'apply_patch', { patch: 'not a diff' })).content.stderr).toMatch(
      /No valid patches/,
    );
  });

  it('refuses a patch larger than patch_bytes before running anything', async () => {
    const big = `${'x'.repeat(NOWHERE.patchBytes)}é`;
    expect(await call(NOWHERE, 'apply_patch', { patch: big })).toMatchObject({
      ok: false,
      content: { error: `patch larger than patch_bytes (${NOWHERE.patchBytes} bytes)` },
    });
  });
});

describe('callTool arguments', () => {
  it('throws ToolArgumentsError for malformed JSON, schema mismatches and unknown tools', async () => {
    const cases: Array<[string, string, RegExp]> = [
      ['run_command', '{"command": "ls"', /run_command: the arguments are not JSON/],
      ['run_command', '{"command": "ls"}', /run_command\.timeout_s: /],
      [
        'run_command',
        '{"command": "ls", "timeout_s": null, "shell": "bash"}',
        /unknown key `shell`/,
      ],
      ['run_command', '{"command": 1, "timeout_s": null}', /run_command\.command: /],
      ['run_command', '{"command": "ls", "timeout_s": -1}', /run_command\.timeout_s: /],
      ['read_file', '{"path": "a", "offset": 1.5, "limit": null}', /read_file\.offset: /],
      ['read_file', '["a", null, null]', /read_file: /],
      ['apply_patch', 'null', /apply_patch: /],
      ['apply_patch', '{"patch": "x", "check": true}', /unknown key `check`/],
      [
        'write_file',
        '{}',
        /unknown tool "write_file"; the tools are run_command, read_file, apply_patch/,
      ],
    ];
    for (const [name, args, message] of cases) {
      const error = await callTool(NOWHERE, name, args, budget()).then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
      expect(error, `${name} ${args}`).toBeInstanceOf(ToolArgumentsError);
      expect(isProctorError(error, 'PAYLOAD_INVALID')).toBe(true);
      expect((error as Error).message).toMatch(message);
    }
  });

  it('publishes strict JSON schemas: every property required, no others allowed, null for optional', () => {
    expect(Object.keys(TOOL_DEFINITIONS)).toEqual([...TOOL_NAMES]);
    for (const name of TOOL_NAMES) {
      const { description, parameters } = TOOL_DEFINITIONS[name];
      expect(description.length).toBeGreaterThan(20);
      const schema = parameters as {
        type: string;
        properties: Record<string, { type: unknown; description?: string }>;
        required: string[];
        additionalProperties: boolean;
      };
      expect(schema.type).toBe('object');
      expect(schema.additionalProperties).toBe(false);
      expect([...schema.required].sort()).toEqual(Object.keys(schema.properties).sort());
      for (const property of Object.values(schema.properties)) {
        expect(property.description).toEqual(expect.any(String));
      }
      expect(JSON.stringify(parameters)).not.toMatch(/anyOf|\$schema|\$ref/);
    }
    expect(TOOL_DEFINITIONS.run_command.parameters).toMatchObject({
      properties: {
        command: { type: 'string' },
        timeout_s: { type: ['number', 'null'], exclusiveMinimum: 0 },
      },
      required: ['command', 'timeout_s'],
    });
    expect(TOOL_DEFINITIONS.read_file.parameters).toMatchObject({
      properties: {
        path: { type: 'string' },
        offset: { type: ['integer', 'null'], minimum: 0 },
        limit: { type: ['integer', 'null'], minimum: 1 },
      },
      required: ['path', 'offset', 'limit'],
    });
    expect(TOOL_DEFINITIONS.apply_patch.parameters).toMatchObject({
      properties: { patch: { type: 'string' } },
      required: ['patch'],
    });
  });
});
