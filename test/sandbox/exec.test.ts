// execInContainer against the real engine, in a container hardened like Proctor's sandboxes:
// ordinary commands, stdin, and the adversarial ones it exists for (output floods, endless
// loops, detached descendants, memory hogs, fork bombs). Each test gets a fresh container, removed
// afterwards.
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isProctorError } from '../../src/errors.js';
import { createDockerClient, requireDocker } from '../../src/sandbox/docker.js';
import { execInContainer, type ExecOptions } from '../../src/sandbox/exec.js';
import { LABEL } from '../../src/sandbox/labels.js';
import { onCleanup } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';

const docker = createDockerClient();
const JOB = 'test-exec';
const MiB = 1024 * 1024;

async function hardenedContainer(): Promise<string> {
  const container = await docker.createContainer({
    Image: 'debian:bookworm-slim',
    Cmd: ['sleep', 'infinity'],
    User: '1000:1000',
    Labels: { [LABEL.job]: JOB, [LABEL.role]: 'probe' },
    HostConfig: {
      NetworkMode: 'none',
      ReadonlyRootfs: true,
      CapDrop: ['ALL'],
      SecurityOpt: ['no-new-privileges'],
      Tmpfs: { '/tmp': 'rw,size=16m,mode=1777' },
      Memory: 256 * MiB,
      MemorySwap: 256 * MiB,
      PidsLimit: 128,
      Init: true,
    },
  });
  onCleanup(() => container.remove({ force: true }));
  await container.start();
  return container.id;
}

function run(id: string, cmd: string[], options: Partial<ExecOptions> = {}) {
  return execInContainer(docker, id, {
    cmd,
    timeoutMs: 30_000,
    outputBytes: 64 * 1024,
    ...options,
  });
}

/** The command lines of every live process in the container but the probe's own. */
async function processes(id: string): Promise<string[]> {
  const script = `for d in /proc/[0-9]*; do
    [ "\${d#/proc/}" = "$$" ] && continue
    read -r st < "$d/stat" 2>/dev/null || continue
    case "\${st##*) }" in Z*|X*) continue;; esac
    tr '\\0' ' ' < "$d/cmdline"; echo
  done`;
  const result = await run(id, ['sh', '-c', script]);
  expect(result.exitCode).toBe(0);
  return result.stdout
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '')
    .sort();
}

const IDLE = ['/sbin/docker-init -- sleep infinity', 'sleep infinity'];

beforeAll(async () => {
  await requireDocker(docker);
});

afterAll(async () => {
  const left = await docker.listContainers({
    all: true,
    filters: { label: [`${LABEL.job}=${JOB}`] },
  });
  expect(left.map((c) => c.Id)).toEqual([]);
});

describe('execInContainer', () => {
  it('returns stdout, stderr and the exit code, as the given user, in the given directory', async () => {
    const id = await hardenedContainer();
    const ok = await run(id, ['sh', '-c', 'id -u; pwd; echo "$GREETING" >&2'], {
      user: '1000:1000',
      workdir: '/tmp',
      env: { GREETING: 'hello there' },
    });
    expect(ok).toMatchObject({
      exitCode: 0,
      stdout: '1000\n/tmp\n',
      stderr: 'hello there\n',
      stdoutBytes: 10,
      stderrBytes: 12,
      timedOut: false,
      aborted: false,
      oomKilled: false,
      truncated: false,
    });
    const failed = await run(id, ['sh', '-c', 'echo nope >&2; exit 3']);
    expect(failed).toMatchObject({ exitCode: 3, stdout: '', stderr: 'nope\n', oomKilled: false });
  });

  it('captures 600 MB of output in bounded memory and counts every byte', async () => {
    const id = await hardenedContainer();
    const before = process.memoryUsage().rss;
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 50);
    onCleanup(() => clearInterval(sampler));
    const result = await run(id, ['sh', '-c', 'yes | head -c 600000000; echo done >&2'], {
      timeoutMs: 100_000,
      outputBytes: MiB,
    });
    peak = Math.max(peak, process.memoryUsage().rss);
    expect(result).toMatchObject({
      exitCode: 0,
      timedOut: false,
      truncated: true,
      stderr: 'done\n',
    });
    expect(result.stdoutBytes).toBe(600_000_000);
    expect(result.stdout).toMatch(/^(y\n){1000}/);
    expect(result.stdout).toMatch(/(y\n){1000}$/);
    expect(result.stdout).toContain(`\n…[${600_000_000 - MiB} bytes omitted]…\n`);
    expect(result.stdout.length).toBeLessThan(MiB + 100);
    expect(peak - before).toBeLessThan(64 * MiB);
  });

  it('kills an endless loop and its descendants at the time limit, leaving nothing running', async () => {
    const id = await hardenedContainer();
    const started = Date.now();
    // One child stays in the command's process group, one leaves it with setsid.
    const loop = 'sleep 1000 & setsid sleep 1001 & while :; do :; done';
    const result = await run(id, ['sh', '-c', loop], { timeoutMs: 1000 });
    expect(Date.now() - started).toBeLessThan(1000 + 2000);
    expect(result).toMatchObject({ timedOut: true, aborted: false, oomKilled: false });
    expect(result.durationMs).toBeGreaterThanOrEqual(1000);
    expect(await processes(id)).toEqual(IDLE);
  });

  it('learns an exit from the end of the output: one inspect for a short command, a few for a long one', async () => {
    const id = await hardenedContainer();
    // The real engine, with each exec's inspects counted.
    let inspects = 0;
    const counting = {
      getContainer: (cid: string) => {
        const container = docker.getContainer(cid);
        return {
          id: container.id,
          inspect: () => container.inspect(),
          exec: async (options: Parameters<typeof container.exec>[0]) => {
            const exec = await container.exec(options);
            const inspect = exec.inspect.bind(exec) as () => Promise<unknown>;
            exec.inspect = (() => {
              inspects += 1;
              return inspect();
            }) as typeof exec.inspect;
            return exec;
          },
        };
      },
    } as unknown as typeof docker;
    const short = [];
    for (let i = 0; i < 5; i++) {
      inspects = 0;
      const result = await execInContainer(counting, id, {
        cmd: ['true'],
        timeoutMs: 30_000,
        outputBytes: 1024,
      });
      expect(result.exitCode).toBe(0);
      short.push(inspects);
    }
    // The engine may mark the exit a moment after the output ends: then one look more.
    expect(Math.min(...short)).toBe(1);
    expect(Math.max(...short)).toBeLessThanOrEqual(3);
    /** The inspects of a `sleep SECONDS`, whose output stays open until it exits. */
    const looks = async (seconds: number) => {
      inspects = 0;
      const slept = await execInContainer(counting, id, {
        cmd: ['sleep', String(seconds)],
        timeoutMs: 30_000,
        outputBytes: 1024,
      });
      expect(slept.exitCode).toBe(0);
      return inspects;
    };
    // At most one every 250 ms while the output is open (40 at the old 50 ms), then the exit.
    expect(await looks(2)).toBeLessThanOrEqual(12);
    // The waits grow from 250 ms to 1 s: 8 looks in 6 s (24 at a steady 250 ms), then the exit.
    expect(await looks(6)).toBeLessThanOrEqual(11);
  });

  it('sees the exit within a second and the drain bound when a descendant keeps stdout open after a long run', async () => {
    const id = await hardenedContainer();
    const started = Date.now();
    const result = await run(id, ['sh', '-c', "setsid sh -c 'sleep 1000' & sleep 4; echo ended"], {
      drainMs: 300,
    });
    // Its exit at 4 s, seen by the next look (at most 1 s later), then the drain's 300 ms.
    expect(Date.now() - started).toBeLessThan(4000 + 1000 + 300 + 1500);
    expect(result).toMatchObject({ exitCode: 0, timedOut: false, stdout: 'ended\n' });
  });

  it('returns within the drain bound when a detached descendant keeps stdout open', async () => {
    const id = await hardenedContainer();
    const started = Date.now();
    const result = await run(id, ['sh', '-c', "setsid sh -c 'sleep 1000' & echo started"], {
      drainMs: 300,
    });
    expect(Date.now() - started).toBeLessThan(300 + 1500);
    expect(result).toMatchObject({ exitCode: 0, timedOut: false, stdout: 'started\n' });
    // Left running by design: only a timeout or an abort kills; removing the container ends it.
    expect(await processes(id)).toContain('sleep 1000');
  });

  it('stops reading after drainBytes when a detached descendant keeps writing', async () => {
    const id = await hardenedContainer();
    const started = Date.now();
    const result = await run(id, ['sh', '-c', 'setsid yes & sleep 0.2'], {
      drainMs: 20_000,
      drainBytes: MiB,
    });
    expect(Date.now() - started).toBeLessThan(5000);
    expect(result).toMatchObject({ exitCode: 0, timedOut: false, truncated: true });
  });

  it('kills the command within a second of the abort signal', async () => {
    const id = await hardenedContainer();
    const controller = new AbortController();
    let abortedAt = 0;
    const timer = setTimeout(() => {
      abortedAt = Date.now();
      controller.abort();
    }, 500);
    onCleanup(() => clearTimeout(timer));
    const result = await run(id, ['sleep', '1000'], { signal: controller.signal });
    expect(abortedAt).toBeGreaterThan(0);
    expect(Date.now() - abortedAt).toBeLessThan(1000);
    expect(result).toMatchObject({ aborted: true, timedOut: false });
    expect(await processes(id)).toEqual(IDLE);

    const early = await run(id, ['sleep', '1000'], { signal: AbortSignal.abort() });
    expect(early).toMatchObject({ aborted: true, timedOut: false, exitCode: null });
  });

  it('reports a memory hog killed by the OOM killer, and the container lives on', async () => {
    const id = await hardenedContainer();
    const result = await run(id, ['sh', '-c', 'head -c 600m /dev/zero | tail']);
    expect(result).toMatchObject({ exitCode: 137, oomKilled: true, timedOut: false });
    expect((await run(id, ['echo', 'alive'])).stdout).toBe('alive\n');
  });

  it('holds a fork bomb with the pids limit, kills it at the time limit, and the container stays usable', async () => {
    const id = await hardenedContainer();
    const started = Date.now();
    // The bomb goes off in a subshell and the loop needs no fork: once the bomb fills the
    // pids limit, a shell that still had to fork would exit at once (dash: "Cannot fork"),
    // which on a loaded machine can happen before the loop starts.
    const result = await run(id, ['sh', '-c', '(f() { f | f & }; f) & while :; do :; done'], {
      timeoutMs: 3000,
    });
    expect(result).toMatchObject({ timedOut: true, oomKilled: false });
    expect(result.stderr).toMatch(/fork/i); // the bomb hit the pids limit
    // The kill comes at the time limit; the rest is the engine's, slow on a loaded machine.
    expect(Date.now() - started).toBeLessThan(3000 + 20_000);
    // Orphans are reaped by the container's init; wait for them to disappear.
    await waitFor(async () => (await processes(id)).join() === IDLE.join(), {
      timeoutMs: 5000,
      what: 'the bomb to be gone',
    });
    expect((await run(id, ['echo', 'alive'])).stdout).toBe('alive\n');
  });

  it('runs the command before a stdin function has made its bytes, then passes them and EOF', async () => {
    const id = await hardenedContainer();
    let calledAt = 0;
    const late = await run(id, ['sh', '-c', 'date +%s%N; cat; date +%s%N'], {
      stdin: async () => {
        calledAt = Date.now();
        await new Promise((resolve) => setTimeout(resolve, 600));
        return Buffer.from('made later\n');
      },
    });
    expect(calledAt).toBeGreaterThan(0);
    expect(late).toMatchObject({ exitCode: 0, timedOut: false });
    const [before, text, after] = late.stdout.trim().split('\n');
    expect(text).toBe('made later');
    // The command was up and waiting on its stdin while the bytes were being made.
    expect((Number(after) - Number(before)) / 1e6).toBeGreaterThan(450);
    // A function that fails leaves the command its EOF, and nothing else.
    const failed = await run(id, ['wc', '-c'], {
      stdin: () => Promise.reject(new Error('no bytes')),
    });
    expect(failed).toMatchObject({ exitCode: 0, stdout: '0\n', timedOut: false });
  });

  it('passes 3 MB of stdin to the command byte for byte, then EOF', async () => {
    const id = await hardenedContainer();
    // Text, because the result decodes output as UTF-8; 3 MB of it, far past any pipe buffer.
    const input = Buffer.from(randomBytes(2_250_000).toString('base64'));
    expect(input.length).toBe(3_000_000);
    const sha = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex');
    // The exit can be seen before the engine has relayed the last output: let the drain take it.
    const echoed = await run(id, ['cat'], {
      stdin: input,
      outputBytes: 4 * MiB,
      drainBytes: 8 * MiB,
    });
    expect(echoed).toMatchObject({ exitCode: 0, stdoutBytes: 3_000_000, truncated: false });
    expect(sha(echoed.stdout)).toBe(sha(input));

    const counted = await run(id, ['wc', '-c'], { stdin: input });
    expect(counted).toMatchObject({ exitCode: 0, stdout: '3000000\n', timedOut: false });
    const empty = await run(id, ['wc', '-c'], { stdin: Buffer.alloc(0) });
    expect(empty).toMatchObject({ exitCode: 0, stdout: '0\n', timedOut: false });
  });

  it('returns when the command exits without reading its stdin', async () => {
    const id = await hardenedContainer();
    const started = Date.now();
    const stdin = Buffer.alloc(8 * MiB, 'x');
    const result = await run(id, ['sh', '-c', 'echo ignored; exit 4'], { stdin });
    expect(result).toMatchObject({ exitCode: 4, stdout: 'ignored\n', timedOut: false });
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('kills a command that blocks with its stdin unread at the time limit', async () => {
    const id = await hardenedContainer();
    const started = Date.now();
    const stdin = Buffer.alloc(8 * MiB, 'x');
    const result = await run(id, ['sleep', '1000'], { stdin, timeoutMs: 1000 });
    expect(result).toMatchObject({ timedOut: true, aborted: false });
    expect(Date.now() - started).toBeLessThan(1000 + 2000);
    expect(await processes(id)).toEqual(IDLE);
  });

  it('rejects invalid options and reports a missing container as a Docker error', async () => {
    const invalid: Array<Partial<ExecOptions>> = [
      { cmd: [] },
      { timeoutMs: 0 },
      { outputBytes: -1 },
      { drainBytes: 0.5 },
      { env: { 'A=B': 'x' } },
      { env: { PROCTOR_EXEC_ID: 'x' } },
      { stdin: 'text' as unknown as Buffer },
      { clockFrom: { marker: '', beforeMs: 1000 } },
      { clockFrom: { marker: 'x', beforeMs: 0 } },
    ];
    for (const options of invalid) {
      await expect(run('unused', ['true'], options)).rejects.toSatisfy((error) =>
        isProctorError(error, 'SANDBOX_INVALID'),
      );
    }
    await expect(run('proctor-no-such-container', ['true'])).rejects.toSatisfy((error) =>
      isProctorError(error, 'DOCKER_ERROR'),
    );
  });
});
