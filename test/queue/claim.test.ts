// SQLite-only claim checks; the store's behaviour is in the conformance suite.
import { describe, expect, it } from 'vitest';
import { tempStore } from '../helpers/temp.js';

describe('claim on SQLite', () => {
  it('uses the partial claim index, not a sort', async () => {
    const store = tempStore();
    const plan = store.database.sqlite
      .prepare(
        "EXPLAIN QUERY PLAN SELECT id FROM jobs WHERE status = 'queued' AND kind = ? AND run_at <= ? ORDER BY priority DESC, run_at, id LIMIT 5",
      )
      .all('noop', 0) as Array<{ detail: string }>;
    const text = plan.map((p) => p.detail).join('\n');
    expect(text).toContain('jobs_claim');
    expect(text).not.toContain('TEMP B-TREE');
  });
});
