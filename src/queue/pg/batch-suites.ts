// The suite a batch was enqueued from, on PostgreSQL (see ../sqlite/batch-suites.ts).
import { ProctorError } from '../../errors.js';
import { batchSuiteText, parseBatchSuite } from '../suites.js';
import type { Queryable } from './sql.js';

export async function recordBatchSuite(
  db: Queryable,
  batchId: string,
  tasks: readonly string[],
): Promise<void> {
  const text = batchSuiteText(tasks);
  const { rows } = await db.query<{ id: string }>('SELECT id FROM batches WHERE id = $1', [
    batchId,
  ]);
  if (rows.length === 0) throw new ProctorError('BATCH_NOT_FOUND', `no batch ${batchId}`);
  await db.query(
    'INSERT INTO batch_suites (batch_id, tasks) VALUES ($1, $2) ON CONFLICT (batch_id) DO NOTHING',
    [batchId, text],
  );
}

export async function batchSuite(db: Queryable, batchId: string): Promise<string[] | null> {
  const { rows } = await db.query<{ tasks: string }>(
    'SELECT tasks FROM batch_suites WHERE batch_id = $1',
    [batchId],
  );
  return rows[0] ? parseBatchSuite(batchId, rows[0].tasks) : null;
}
