// `proctor baseline PATH… [--gold] [--repeat N] [--wait]`: one baseline job per bundle of the
// given bundles and suites, enqueued as one batch (one transaction). With --wait, a live
// progress line and then a table of each task's validity or quarantine reason.
// Exit: 0 enqueued / none quarantined; 1 any bundle invalid, quarantined or in error.
import { ProctorError } from '../errors.js';
import { createLogger } from '../logger.js';

import { createRuntime, type BaselineResult } from '../workers/index.js';
import { loadBundles } from './bundles.js';
import type { CommandContext } from './context.js';
import { formatTable } from './table.js';
import { waitForJobs } from './wait.js';

export interface BaselineOptions {
  gold?: boolean;
  repeat: number;
  wait?: boolean;
  json?: boolean;
}

const clip = (text: string, n = 100) => (text.length > n ? `${text.slice(0, n - 1)}…` : text);

export async function baselineCommand(
  context: CommandContext,
  paths: string[],
  options: BaselineOptions,
): Promise<number> {
  const { io, config } = context;
  const { bundles, invalid } = await loadBundles(io, paths);
  if (bundles.length === 0) {
    io.err('proctor: no valid bundle to baseline');
    return 1;
  }
  const runtime = createRuntime(config, context.clock, createLogger({ level: 'warn' }));
  try {
    const { batch: made } = await runtime.store.enqueueBatch({
      label: `baseline ${paths.join(' ')}`.slice(0, 200),
      jobs: bundles.map((bundle) => ({
        kind: 'baseline',
        payload: { bundle: bundle.dir, gold: options.gold ?? false, repeat: options.repeat },
      })),
    });
    if (made === null) throw new ProctorError('INTERNAL', 'the batch was not created');
    const batch = made;
    const noGold = options.gold ? bundles.filter((b) => b.paths.goldPatch === undefined) : [];
    for (const bundle of noGold) io.err(`proctor: ${bundle.id} has no solution/gold.patch`);
    if (!options.wait) {
      io.out(`batch ${batch.id}: ${bundles.length} baseline job(s) enqueued`);
      io.out(`follow it with: proctor status --batch ${batch.id}`);
      return invalid > 0 ? 1 : 0;
    }
    const { jobs, interrupted } = await waitForJobs(
      context,
      runtime,
      {
        batchId: batch.id,
        label: 'baseline',
        verdictNames: { PASS: 'valid', FAIL: 'quarantined' },
      },
      { progress: !options.json, isTty: process.stderr.isTTY === true },
    );
    const byDir = new Map(bundles.map((b) => [b.dir, b]));
    const rows = jobs.map((job) => {
      const payload = job.payload as { bundle: string };
      const result = job.result as BaselineResult | null;
      const task = byDir.get(payload.bundle)?.id ?? payload.bundle;
      if (job.status === 'done' && result) {
        return {
          task,
          job: job.id,
          validity: result.validity,
          reason: result.reason,
          detail: result.detail,
        };
      }
      const validity = job.status === 'failed' ? 'error' : job.status;
      return { task, job: job.id, validity, reason: '-', detail: job.lastError ?? '' };
    });
    if (options.json) {
      io.out(JSON.stringify({ batch: batch.id, tasks: rows }, null, 2));
    } else {
      io.out(
        formatTable(
          ['TASK', 'VALIDITY', 'REASON', 'DETAIL', 'JOB'],
          rows.map((r) => [r.task, r.validity, r.reason, clip(r.detail), String(r.job)]),
        ),
      );
      const valid = rows.filter((r) => r.validity === 'valid').length;
      io.out(
        `${valid} valid, ${rows.filter((r) => r.validity === 'quarantined').length} quarantined, ${rows.filter((r) => !['valid', 'quarantined'].includes(r.validity)).length} not judged${invalid > 0 ? `, ${invalid} invalid bundle(s) skipped` : ''} (batch ${batch.id}; oracle logs: proctor status JOB --log)`,
      );
    }
    if (interrupted) return 130;
    return invalid > 0 || rows.some((r) => r.validity !== 'valid') ? 1 : 0;
  } finally {
    await runtime.close();
  }
}
