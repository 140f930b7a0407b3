// SQLite-only checks of retries (the store-level cases run on both stores in
// test/queue/conformance/retry.cases.ts).
import { describe, expect, it } from 'vitest';
import { tempStore } from '../helpers/temp.js';

describe('outcome counts and retry candidates on SQLite', () => {
  it('find a retry through the unique key index, not a scan', async () => {
    const store = tempStore();
    const plan = store.database.sqlite
      .prepare(
        `EXPLAIN QUERY PLAN SELECT 1 FROM jobs r WHERE r.idempotency_key = 'proctor-retry-of:' || ?`,
      )
      .all(1) as Array<{ detail: string }>;
    expect(plan.map((p) => p.detail).join('\n')).toContain('jobs_idempotency_key');
  });
});
