import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/queue/db.js';
import { createWriteBatcher } from '../../src/queue/sqlite/write-batcher.js';
import { onCleanup, tempDir } from '../helpers/temp.js';

function setup() {
  const database = openDatabase(join(tempDir(), 'proctor.db'));
  onCleanup(() => database.close());
  const { sqlite } = database;
  sqlite.exec('CREATE TABLE t (v INTEGER UNIQUE)');
  const insert = sqlite.prepare('INSERT INTO t (v) VALUES (?)');
  const values = () =>
    (sqlite.prepare('SELECT v FROM t ORDER BY v').all() as Array<{ v: number }>).map((r) => r.v);
  return { sqlite, insert, values };
}

describe('write batcher', () => {
  it('commits the writes of one turn together, in order', async () => {
    const { sqlite, insert, values } = setup();
    const batcher = createWriteBatcher(sqlite);
    const before = sqlite.prepare('PRAGMA data_version').pluck().get();
    const results = await Promise.all(
      [1, 2, 3].map((v) => batcher.run(() => insert.run(v).changes)),
    );
    expect(results).toEqual([1, 1, 1]);
    expect(values()).toEqual([1, 2, 3]);
    expect(before).toBeDefined();
  });

  it('rolls back only the write that throws, even a multi-statement one', async () => {
    const { sqlite, insert, values } = setup();
    const batcher = createWriteBatcher(sqlite);
    const outcomes = await Promise.allSettled([
      batcher.run(() => insert.run(1)),
      batcher.run(() => {
        insert.run(2); // written, then undone with the rest of this write
        insert.run(1); // UNIQUE violation
      }),
      batcher.run(() => insert.run(3)),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(String((outcomes[1] as PromiseRejectedResult).reason)).toContain('UNIQUE');
    expect(values()).toEqual([1, 3]);
  });
});
