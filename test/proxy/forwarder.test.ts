import { spawn, spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { forwarderArgv } from '../../src/proxy/index.js';

const RUNTIMES = ['node', 'python'] as const;
const INTERPRETER = { node: process.execPath, python: 'python3' } as const;

describe('the forwarder', () => {
  it.each(['node', 'python'] as const)('refuses bad arguments in one line (%s)', (runtime) => {
    const argv = forwarderArgv({ runtime, port: 1, socketPath: '/nowhere' });
    argv[0] = runtime === 'node' ? process.execPath : 'python3';
    for (const args of [['x', '/s'], ['70000', '/s'], ['1'], ['1', '/s', 'extra']]) {
      const run = spawnSync(argv[0], [...argv.slice(1, 3), ...args], { encoding: 'utf8' });
      expect(run.status, args.join(' ')).toBe(2);
      expect(run.stderr).toBe('proctor forwarder: usage: PORT SOCKET [-- COMMAND ARGS...]\n');
    }
  });

  // An agent whose stdout is non-blocking (Codex's was, in a docker exec) got EAGAIN once the
  // exec's pipe was full and died. The forwarder's own pipe, drained at once, never fills.
  it.each(RUNTIMES)(
    'drains a command that writes to a non-blocking stdout faster than the reader reads (%s)',
    async (runtime) => {
      const writer = [
        'import fcntl, os, time',
        'fcntl.fcntl(1, fcntl.F_SETFL, fcntl.fcntl(1, fcntl.F_GETFL) | os.O_NONBLOCK)',
        'for _ in range(64):',
        '    view = memoryview(b"x" * 16384)',
        '    while view:',
        '        view = view[os.write(1, view):]',
        '    time.sleep(0.005)',
      ].join('\n');
      const argv = forwarderArgv({
        runtime,
        interpreter: INTERPRETER[runtime],
        port: 0,
        socketPath: '/nowhere',
        command: ['python3', '-c', writer],
      });
      const child = spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
      let stderr = '';
      let bytes = 0;
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      const closed = new Promise<number | null>((resolve) => child.on('close', resolve));
      // Nothing is read for a while: the reader's pipe fills.
      child.stdout.pause();
      await new Promise((resolve) => setTimeout(resolve, 1500));
      child.stdout.on('data', (d: Buffer) => (bytes += d.length));
      child.stdout.resume();
      const code = await closed;
      expect(stderr).toBe('');
      expect(code).toBe(0);
      expect(bytes).toBe(64 * 16384);
    },
    30_000,
  );

  // An agent that prints without end must not grow the forwarder to the memory limit (the
  // agent would then end killed by it, not as a flood): past 8 MiB waiting for our reader, the
  // command's own pipe is left to fill and its writes block.
  it.each(RUNTIMES)(
    'holds back a command whose output its reader does not take, past 8 MiB (%s)',
    async (runtime) => {
      const writer = [
        'import os, sys',
        'for i in range(1, 49):',
        '    os.write(1, b"x" * 1048576)',
        '    os.write(2, b"wrote %d\\n" % i)',
      ].join('\n');
      const argv = forwarderArgv({
        runtime,
        interpreter: INTERPRETER[runtime],
        port: 0,
        socketPath: '/nowhere',
        command: ['python3', '-c', writer],
      });
      const child = spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
      let wrote = 0;
      let bytes = 0;
      child.stderr.on('data', (d: Buffer) => {
        for (const m of d.toString().matchAll(/wrote (\d+)/g)) wrote = Number(m[1]);
      });
      const closed = new Promise<number | null>((resolve) => child.on('close', resolve));
      child.stdout.pause();
      await new Promise((resolve) => setTimeout(resolve, 3000));
      // 8 MiB held, the pipes' buffers and the write in progress: far from all 48 MiB.
      const whilePaused = wrote;
      child.stdout.on('data', (d: Buffer) => (bytes += d.length));
      child.stdout.resume();
      expect(await closed).toBe(0);
      expect(whilePaused).toBeGreaterThanOrEqual(4);
      expect(whilePaused).toBeLessThan(16);
      expect(bytes).toBe(48 * 1048576);
    },
    60_000,
  );

  // A process the agent left behind (a server, a watcher) keeps the pipes open after the agent
  // has exited: the forwarder waits 2 s for them, then exits with the agent's status, instead of
  // holding the run to its deadline.
  it.each(RUNTIMES)(
    'exits with the command’s status when a process it left behind holds its pipes (%s)',
    async (runtime) => {
      const argv = forwarderArgv({
        runtime,
        interpreter: INTERPRETER[runtime],
        port: 0,
        socketPath: '/nowhere',
        command: ['sh', '-c', 'sleep 60 & echo started; echo oops >&2; exit 7'],
      });
      const started = Date.now();
      const run = await new Promise<{ code: number | null; stdout: string; stderr: string }>(
        (resolve) => {
          const child = spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
          let stdout = '';
          let stderr = '';
          child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
          child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
          // 'exit', not 'close': the sleep holds our end of the pipes too.
          child.on('exit', (code) => resolve({ code, stdout, stderr }));
        },
      );
      expect(run.code).toBe(7);
      expect(run.stdout).toBe('started\n');
      expect(run.stderr).toBe('oops\n');
      expect(Date.now() - started).toBeLessThan(10_000);
    },
    30_000,
  );

  it.each(RUNTIMES)(
    'passes a signal on and exits 128 + its number (%s)',
    async (runtime) => {
      const argv = forwarderArgv({
        runtime,
        interpreter: INTERPRETER[runtime],
        port: 0,
        socketPath: '/nowhere',
        command: ['sleep', '60'],
      });
      const child = spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
      const code = new Promise<number | null>((resolve) => child.on('exit', resolve));
      // The command starts once the forwarder listens; give it that moment.
      await new Promise((resolve) => setTimeout(resolve, 1000));
      child.kill('SIGTERM');
      expect(await code).toBe(128 + 15);
    },
    30_000,
  );

  it('puts the command after `--`', () => {
    expect(
      forwarderArgv({ runtime: 'python', port: 9, socketPath: '/s', command: ['a', 'b'] }).slice(3),
    ).toEqual(['9', '/s', '--', 'a', 'b']);
  });
});
