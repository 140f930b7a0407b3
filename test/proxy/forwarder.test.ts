import { spawnSync } from 'node:child_process';
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

  it('puts the command after `--`', () => {
    expect(
      forwarderArgv({ runtime: 'python', port: 9, socketPath: '/s', command: ['a', 'b'] }).slice(3),
    ).toEqual(['9', '/s', '--', 'a', 'b']);
  });
});
