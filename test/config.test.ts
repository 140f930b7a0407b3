import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { defaultSlots, loadConfig, solverPrices, validateSlots } from '../src/config.js';
import { isProctorError } from '../src/errors.js';
import { poolSettings } from '../src/workers/index.js';
import { tempDir } from './helpers/temp.js';

function withConfig(text: string): string {
  const home = join(tempDir(), '.proctor');
  mkdirSync(home);
  writeFileSync(join(home, 'proctor.toml'), text);
  return home;
}

describe('configuration', () => {
  it('defaults every key, with slots from cores and memory', () => {
    const home = join(tempDir(), '.proctor');
    const config = loadConfig(home);
    const slots = defaultSlots();
    expect(config).toMatchObject({
      dbPath: join(home, 'proctor.db'),
      workers: {
        baseline: slots,
        grade: slots,
        solve: slots,
        validate: validateSlots(slots),
        pulls: 2,
      },
      queue: { lease_seconds: 60, max_attempts: 3, synchronous: 'full', retention_days: 0 },
      sandbox: { runtime: 'runc', uid: 1000, gid: 1000, templates: 8 },
      solvers: {},
    });
  });

  it('sizes default slots by the smaller of cores and memory at 2 GiB each', () => {
    expect(defaultSlots(2, 24 * 1024 ** 3)).toBe(2);
    expect(defaultSlots(64, 8 * 1024 ** 3)).toBe(3);
    expect(defaultSlots(8, 1024 ** 3)).toBe(1);
  });

  it('gives validate jobs two slots by default, one on a one-slot host', () => {
    expect(validateSlots(8)).toBe(2);
    expect(validateSlots(1)).toBe(1);
  });

  it('maps workers, lease and retention to pool settings', () => {
    const config = loadConfig(
      withConfig(
        '[workers]\ngrade = 5\nvalidate = 3\n[queue]\nlease_seconds = 30\nretention_days = 7\n',
      ),
    );
    expect(poolSettings(config)).toMatchObject({
      concurrency: { grade: 5, validate: 3 },
      leaseMs: 30_000,
      retentionMs: 7 * 24 * 3600 * 1000,
    });
  });

  it('reads [workers] pulls, the image pulls at once in one process, and refuses 0', () => {
    expect(loadConfig(withConfig('[workers]\npulls = 3\n')).workers.pulls).toBe(3);
    expect(() => loadConfig(withConfig('[workers]\npulls = 0\n'))).toThrow(/workers\.pulls/);
  });

  it('reads [images] max_gb as bytes, none by default, and refuses a size that is not > 0 in one line', () => {
    expect(loadConfig(join(tempDir(), '.proctor')).images.maxBytes).toBeUndefined();
    expect(loadConfig(withConfig('[images]\nmax_gb = 200\n')).images.maxBytes).toBe(200e9);
    expect(loadConfig(withConfig('[images]\nmax_gb = 0.5\n')).images.maxBytes).toBe(5e8);
    for (const bad of ['0', '-1', 'inf', 'nan', '"10"', '2000000']) {
      const home = withConfig(`[images]\nmax_gb = ${bad}\n`);
      expect(() => loadConfig(home)).toThrow(
        new RegExp(
          `^.*proctor\\.toml: key \`images\\.max_gb\`: must be a number of GB greater than 0 and at most 1000000$`,
        ),
      );
    }
    expect(() => loadConfig(withConfig('[images]\nmax_bytes = 1\n'))).toThrow(
      /proctor\.toml: unknown key `images\.max_bytes`$/,
    );
  });

  it('reads [images] timeout_minutes as ms, 15 minutes by default, and refuses one not in (0, 1440] in one line', () => {
    expect(loadConfig(join(tempDir(), '.proctor')).images.timeoutMs).toBe(900_000);
    expect(loadConfig(withConfig('[images]\ntimeout_minutes = 45\n')).images.timeoutMs).toBe(
      2_700_000,
    );
    expect(loadConfig(withConfig('[images]\ntimeout_minutes = 0.5\n')).images.timeoutMs).toBe(
      30_000,
    );
    for (const bad of ['0', '-5', 'inf', 'nan', '"30"', '1441']) {
      const home = withConfig(`[images]\ntimeout_minutes = ${bad}\n`);
      expect(() => loadConfig(home)).toThrow(
        new RegExp(
          `^.*proctor\\.toml: key \`images\\.timeout_minutes\`: must be a number of minutes greater than 0 and at most 1440$`,
        ),
      );
    }
  });

  it('reads a solver profile', () => {
    const config = loadConfig(
      withConfig(
        '[solvers.mini]\nadapter = "flat"\nbase_url = "http://127.0.0.1:8000/v1"\nmodel = "m"\napi_key_env = "OPENAI_API_KEY"\n',
      ),
    );
    expect(config.solvers['mini']).toMatchObject({
      adapter: 'flat',
      max_turns: 50,
      max_tool_calls: 100,
    });
  });

  const PROFILE =
    '[solvers.mini]\nadapter = "flat"\nbase_url = "http://127.0.0.1:8000/v1"\nmodel = "m"\napi_key_env = "OPENAI_API_KEY"\n';

  it('reads token prices; cached input costs the input price unless set, and no prices is null', () => {
    const both = loadConfig(
      withConfig(`${PROFILE}price_input_per_mtok = 2\nprice_output_per_mtok = 8.5\n`),
    );
    expect(solverPrices(both.solvers['mini']!)).toEqual({ input: 2, cachedInput: 2, output: 8.5 });
    const three = loadConfig(
      withConfig(
        `${PROFILE}price_input_per_mtok = 2\nprice_cached_input_per_mtok = 0.5\nprice_output_per_mtok = 0\n`,
      ),
    );
    expect(solverPrices(three.solvers['mini']!)).toEqual({ input: 2, cachedInput: 0.5, output: 0 });
    expect(solverPrices(loadConfig(withConfig(PROFILE)).solvers['mini']!)).toBeNull();
  });

  it.each([
    [
      'price_input_per_mtok = 2\n',
      'key `solvers.mini.price_output_per_mtok`: must be set with price_input_per_mtok',
    ],
    [
      'price_output_per_mtok = 2\n',
      'key `solvers.mini.price_input_per_mtok`: must be set with price_output_per_mtok',
    ],
    [
      'price_cached_input_per_mtok = 1\n',
      'key `solvers.mini.price_input_per_mtok`: must be set with price_cached_input_per_mtok',
    ],
    [
      'price_input_per_mtok = -1\nprice_output_per_mtok = 2\n',
      'key `solvers.mini.price_input_per_mtok`',
    ],
    [
      'price_input_per_mtok = inf\nprice_output_per_mtok = 2\n',
      'key `solvers.mini.price_input_per_mtok`',
    ],
    [
      'price_input_per_mtok = 1\nprice_output_per_mtok = nan\n',
      'key `solvers.mini.price_output_per_mtok`',
    ],
    [
      'price_input_per_mtok = "2"\nprice_output_per_mtok = 2\n',
      'key `solvers.mini.price_input_per_mtok`',
    ],
    [
      'price_input_per_mtok = 1\nprice_output_per_mtok = 1\nprice_cached_input_per_mtok = 1e7\n',
      'key `solvers.mini.price_cached_input_per_mtok`',
    ],
    ['price_per_mtok = 1\n', 'unknown key `solvers.mini.price_per_mtok`'],
  ])('rejects the prices %j naming the key', (prices, message) => {
    expect(() => loadConfig(withConfig(`${PROFILE}${prices}`))).toThrow(message);
  });

  it.each([
    ['surprise = 1\n', 'unknown key `surprise`'],
    ['[queue]\nsynchronous = "off"\n', 'key `queue.synchronous`'],
    ['[sandbox]\nuid = 0\n', 'key `sandbox.uid`'],
    ['[solvers.mini]\nadapter = "flat"\n', 'key `solvers.mini.base_url`'],
    [
      '[solvers.mini]\nadapter="flat"\nbase_url="http://x"\nmodel="m"\napi_key_env="K"\napi_key="sk-secret"\n',
      'unknown key `solvers.mini.api_key`',
    ],
    [
      '[solvers.byo]\nadapter="agent"\nbase_url="http://x"\nmodel="m"\napi_key_env="K"\n',
      'key `solvers.byo.agent`: must name an agent',
    ],
    ['x = \n', 'line 1'],
  ])('rejects %j naming the key', (text, message) => {
    try {
      loadConfig(withConfig(text));
      expect.unreachable();
    } catch (error) {
      expect(isProctorError(error, 'CONFIG_INVALID')).toBe(true);
      expect((error as Error).message).toContain('proctor.toml');
      expect((error as Error).message).toContain(message);
    }
  });
});

describe('the job database', () => {
  const url = 'postgres://proctor:file-secret@db.internal:5432/sweeps';
  const saved = process.env.PROCTOR_DB;
  const withEnv = <T>(value: string | undefined, fn: () => T): T => {
    if (value === undefined) delete process.env.PROCTOR_DB;
    else process.env.PROCTOR_DB = value;
    try {
      return fn();
    } finally {
      if (saved === undefined) delete process.env.PROCTOR_DB;
      else process.env.PROCTOR_DB = saved;
    }
  };

  it('is SQLite in the home unless a database is named', () => {
    const home = join(tempDir(), '.proctor');
    expect(withEnv(undefined, () => loadConfig(home).dbUrl)).toBeUndefined();
  });

  it('is --db, else $PROCTOR_DB, else [queue] url', () => {
    const home = withConfig(`[queue]\nurl = "${url}"\n`);
    const env = 'postgresql://env@localhost/env';
    const flag = 'postgres://flag@localhost/flag';
    expect(withEnv(undefined, () => loadConfig(home).dbUrl)).toBe(url);
    expect(withEnv(env, () => loadConfig(home).dbUrl)).toBe(env);
    expect(withEnv(env, () => loadConfig(home, { db: flag }).dbUrl)).toBe(flag);
  });

  it.each([
    ['--db', { db: 'mysql://u:pw-secret@h/db' }, undefined, 'USAGE'],
    ['PROCTOR_DB', {}, 'sqlite:///x-secret', 'CONFIG_INVALID'],
  ] as const)(
    'refuses a %s that is not postgres://, without echoing it',
    (source, flags, env, code) => {
      const home = join(tempDir(), '.proctor');
      const error = withEnv(env, () => {
        try {
          loadConfig(home, flags);
        } catch (e) {
          return e;
        }
        return undefined;
      });
      expect(isProctorError(error, code)).toBe(true);
      expect((error as Error).message).toContain(`${source}: must be a postgres://`);
      expect((error as Error).message).not.toContain('secret');
    },
  );

  it('refuses a [queue] url that is not postgres://, naming the key and not the value', () => {
    const home = withConfig('[queue]\nurl = "https://u:pw-secret@h/db"\n');
    const error = withEnv(undefined, () => {
      try {
        loadConfig(home);
      } catch (e) {
        return e;
      }
      return undefined;
    });
    expect(isProctorError(error, 'CONFIG_INVALID')).toBe(true);
    expect((error as Error).message).toContain('queue.url');
    expect((error as Error).message).not.toContain('secret');
  });
});
