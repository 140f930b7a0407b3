// `proctor status` on a SQLite home whose database does not exist yet answers as an empty
// database would (same stdout, stderr and exit code, in every form), and creates nothing: a
// read is not a reason to make a database, and start-up stays off the store's modules.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { openSqliteJobStore } from '../../src/queue/index.js';
import { proctor } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

const FORMS = [
  [],
  ['--json'],
  ['--limit', '5'],
  ['--batch', 'b_nope'],
  ['--batch', 'b_nope', '--json'],
  ['7'],
  ['7', '12', '--json'],
  ['7', '--log'],
];

describe('status on a home without a database', () => {
  it.each(FORMS.map((args) => [args.join(' ') || '(no arguments)', args] as const))(
    '%s: the same answer as an empty database, and no database made',
    async (_name, args) => {
      const absent = tempDir('proctor-status-absent-');
      const empty = tempDir('proctor-status-empty-');
      await openSqliteJobStore(join(empty, 'proctor.db'), { clock: systemClock }).close();

      const fromAbsent = await proctor(['--home', absent, 'status', ...args]);
      const fromEmpty = await proctor(['--home', empty, 'status', ...args]);

      expect(fromAbsent).toEqual(fromEmpty);
      expect(existsSync(join(absent, 'proctor.db'))).toBe(false);
      expect(readdirSync(absent)).toEqual([]);
    },
  );

  it('reads the database once one exists', async () => {
    const home = tempDir('proctor-status-then-');
    expect((await proctor(['--home', home, 'status'])).code).toBe(0);
    const store = openSqliteJobStore(join(home, 'proctor.db'), { clock: systemClock });
    try {
      await store.enqueue({ kind: 'noop', payload: { tag: 'x' } });
    } finally {
      await store.close();
    }
    const after = await proctor(['--home', home, 'status']);
    expect(after.code).toBe(0);
    expect(after.stdout).toContain('jobs: 1 queued');
  });
});
