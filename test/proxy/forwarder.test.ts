import { spawn, spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { forwarderArgv } from '../../src/proxy/index.js';

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
  it('drains a command that writes to a non-blocking stdout faster than the reader reads', async () => {
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
      runtime: 'node',
      interpreter: process.execPath,
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
  }, 30_000);

  it('puts the command after `--`', () => {
    expect(
      forwarderArgv({ runtime: 'python', port: 9, socketPath: '/s', command: ['a', 'b'] }).slice(3),
    ).toEqual(['9', '/s', '--', 'a', 'b']);
  });
});
