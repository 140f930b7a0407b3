// `--db` and `proctor db migrate` through the real binary, against the tests' PostgreSQL.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { proctor } from '../helpers/cli.js';
import { emptyPgDatabase } from '../helpers/postgres.js';
import { tempDir } from '../helpers/temp.js';

describe('proctor --db', () => {
  it('migrates a PostgreSQL database once, names it without a password, and reads it', async () => {
    const home = tempDir();
    const url = await emptyPgDatabase();
    const first = await proctor(['--home', home, '--db', url, 'db', 'migrate']);
    expect(first).toMatchObject({ code: 0, stderr: '' });
    expect(first.stdout).toMatch(
      /^postgres:\/\/\*\*\*@localhost:\d+\/proctor_t_\w+.*: up to date \(\d+ migration\(s\) applied\)/,
    );
    const again = await proctor(['--home', home, 'db', 'migrate'], { PROCTOR_DB: url });
    expect(again.stdout).toContain('(0 migration(s) applied)');
    const status = await proctor(['--home', home, '--db', url, 'status', '--json']);
    expect(status.code).toBe(0);
    // The SQLite file is never made when a database is named.
    expect(existsSync(join(home, 'proctor.db'))).toBe(false);
  });

  it('keeps SQLite in the home when no database is named', async () => {
    const home = tempDir();
    const result = await proctor(['--home', home, 'db', 'migrate'], { PROCTOR_DB: '' });
    expect(result).toMatchObject({ code: 0, stdout: `${join(home, 'proctor.db')}: up to date\n` });
  });

  it('refuses a database that is not postgres:// in one line, and one that does not answer', async () => {
    const home = tempDir();
    const bad = await proctor(['--home', home, '--db', 'mysql://u:pw-secret@h/db', 'status']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe(
      'proctor: --db: must be a postgres:// or postgresql:// URL (SQLite needs none: it is the default)\n',
    );
    const gone = await proctor([
      '--home',
      home,
      '--db',
      `postgres://u:pw-secret@localhost:5999/db?host=${tempDir()}`,
      'status',
    ]);
    expect(gone.code).toBe(2);
    expect(gone.stderr).toMatch(
      /^proctor: cannot use database postgres:\/\/\*\*\*@localhost:5999\/db/,
    );
    expect(gone.stderr).not.toContain('pw-secret');
  });
});
