// The suite a batch was enqueued from (`recordBatchSuite` / `batchSuite`): its task ids as one
// JSON array beside the batch, so that a report can name the suite's tasks the batch never
// ran ("not submitted"). Written once: a second record of the same batch keeps the first.
import type Database from 'better-sqlite3';
import { ProctorError } from '../../errors.js';
import { batchSuiteText, parseBatchSuite } from '../suites.js';

export function createBatchSuites(sqlite: Database.Database) {
  const exists = sqlite.prepare<[string], { id: string }>('SELECT id FROM batches WHERE id = ?');
  const insert = sqlite.prepare<[string, string]>(
    'INSERT INTO batch_suites (batch_id, tasks) VALUES (?, ?) ON CONFLICT (batch_id) DO NOTHING',
  );
  const select = sqlite.prepare<[string], { tasks: string }>(
    'SELECT tasks FROM batch_suites WHERE batch_id = ?',
  );
  return {
    record(batchId: string, tasks: readonly string[]): void {
      const text = batchSuiteText(tasks);
      if (!exists.get(batchId)) throw new ProctorError('BATCH_NOT_FOUND', `no batch ${batchId}`);
      insert.run(batchId, text);
    },
    get(batchId: string): string[] | null {
      const row = select.get(batchId);
      return row ? parseBatchSuite(batchId, row.tasks) : null;
    },
  };
}
