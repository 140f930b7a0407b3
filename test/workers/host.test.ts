// The host identity: where it comes from (PROCTOR_HOST, [worker] host, the hostname), how it
// is checked, and that lease owner ids and presence judge by it rather than by the hostname.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig, machineHost } from '../../src/config.js';
import { isProctorError } from '../../src/errors.js';
import {
  announceWorker,
  createOwnerId,
  isDeadLocalOwner,
  liveWorkers,
} from '../../src/workers/index.js';
import { tempDir } from '../helpers/temp.js';

function withConfig(text: string): string {
  const home = join(tempDir(), '.proctor');
  mkdirSync(home);
  writeFileSync(join(home, 'proctor.toml'), text);
  return home;
}

const saved = process.env.PROCTOR_HOST;
function withHost<T>(value: string | undefined, fn: () => T): T {
  if (value === undefined) delete process.env.PROCTOR_HOST;
  else process.env.PROCTOR_HOST = value;
  try {
    return fn();
  } finally {
    if (saved === undefined) delete process.env.PROCTOR_HOST;
    else process.env.PROCTOR_HOST = saved;
  }
}

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  return undefined;
}

describe('the host identity', () => {
  it('is $PROCTOR_HOST, else [worker] host, else the hostname', () => {
    const plain = join(tempDir(), '.proctor');
    const expected = machineHost();
    expect(withHost(undefined, () => loadConfig(plain).host)).toBe(expected);
    const home = withConfig('[worker]\nhost = "rack-7.b"\n');
    expect(withHost(undefined, () => loadConfig(home).host)).toBe('rack-7.b');
    expect(withHost('ns_h2', () => loadConfig(home).host)).toBe('ns_h2');
    expect(withHost('', () => loadConfig(home).host)).toBe('rack-7.b');
  });

  it.each(['a/b', '-lead', 'x'.repeat(64), 'sp ace'])(
    'refuses PROCTOR_HOST=%j with one line naming the rule',
    (value) => {
      const error = withHost(value, () => thrown(() => loadConfig(join(tempDir(), '.proctor'))));
      expect(isProctorError(error, 'CONFIG_INVALID')).toBe(true);
      expect((error as Error).message).toMatch(/^PROCTOR_HOST: must be 1 to 63 letters/);
      expect((error as Error).message).not.toContain('\n');
    },
  );

  it.each(['"a/b"', '""', '7'])('refuses [worker] host = %s, naming the key', (value) => {
    const home = withConfig(`[worker]\nhost = ${value}\n`);
    const error = withHost(undefined, () => thrown(() => loadConfig(home)));
    expect(isProctorError(error, 'CONFIG_INVALID')).toBe(true);
    expect((error as Error).message).toContain('worker.host');
  });

  it('refuses an unknown key of [worker]', () => {
    const home = withConfig('[worker]\nhots = "a"\n');
    const error = withHost(undefined, () => thrown(() => loadConfig(home)));
    expect((error as Error).message).toContain('unknown key `worker.hots`');
  });

  it('starts lease owner ids, and only owners of this host are judged by pid', () => {
    const owner = createOwnerId('ns-h1');
    expect(owner).toMatch(new RegExp(`^ns-h1/${process.pid}/[0-9a-f]{8}$`));
    expect(createOwnerId().startsWith(`${machineHost()}/`)).toBe(true);
    // A pid that no process holds: dead on its own host, unjudged from another.
    const gone = `ns-h2/${2 ** 22 + 17}/00000000`;
    expect(isDeadLocalOwner(gone, undefined, 'ns-h2')).toBe(true);
    expect(isDeadLocalOwner(gone, undefined, 'ns-h1')).toBe(false);
    expect(isDeadLocalOwner(gone)).toBe(false);
  });

  it('counts a live worker of the home under its host identity only', () => {
    const home = tempDir();
    const owner = createOwnerId('ns-h3');
    const withdraw = announceWorker(home, owner);
    try {
      expect(liveWorkers(home, 'ns-h3')).toEqual([owner]);
      expect(liveWorkers(home, 'ns-h1')).toEqual([]);
      expect(liveWorkers(home)).toEqual([]);
    } finally {
      withdraw();
    }
  });
});
