// The queue's behaviour, once, against both stores: idempotent batches, claim order, claims
// scoped to a batch or a job, per-kind slots, leases and reclaim, fencing, cancel, backoff,
// retention, pages, task validity, input artifacts, outcome classes, the cost cap and the
// batch's spend, jobs finished at enqueue, batch appends, retry candidates and a
// running job's progress. Each case gets a
// fresh migrated SQLite file or PostgreSQL database; a PostgreSQL that cannot be started fails the run
// (test/helpers/postgres.ts), never skips it.
import { describe } from 'vitest';
import { STORE_KINDS } from '../helpers/stores.js';
import { batchCountCases } from './conformance/batch-counts.cases.js';
import { cancelCases } from './conformance/cancel.cases.js';
import { claimCases } from './conformance/claim.cases.js';
import { claimScopeCases } from './conformance/claim-scope.cases.js';
import { enqueueCases } from './conformance/enqueue.cases.js';
import { listCases } from './conformance/list.cases.js';
import { outcomeCases } from './conformance/outcome.cases.js';
import { retryCases } from './conformance/retry.cases.js';
import { spendCases } from './conformance/spend.cases.js';
import { taskCases } from './conformance/tasks.cases.js';
import { testStatusCases } from './conformance/test-statuses.cases.js';
import { progressCases } from './conformance/progress.cases.js';

describe.each(STORE_KINDS)('JobStore on $name', (kind) => {
  enqueueCases(kind);
  claimCases(kind);
  claimScopeCases(kind);
  cancelCases(kind);
  listCases(kind);
  taskCases(kind);
  outcomeCases(kind);
  spendCases(kind);
  retryCases(kind);
  batchCountCases(kind);
  testStatusCases(kind);
  progressCases(kind);
});
