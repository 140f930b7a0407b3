// `proctor export JOB…|--batch ID --out FILE.tar.gz [--include-hidden]`: a reproducible debug
// archive of jobs (see src/results/export.ts). A batch brings its solves' grades along. Bad
// input — no jobs or both forms, an unknown job or batch, --out into a missing folder — is one
// line and exit 2, and nothing is written; the archive appears whole or not at all.
import { randomUUID } from 'node:crypto';
import { homedir } from 'node:os';
import { rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { knownSecrets } from '../config.js';
import { ProctorError } from '../errors.js';
import { openArtifactStore, type Job } from '../queue/index.js';
import { MAX_EXPORT_JOBS, exportBatchJobs, exportJobs } from '../results/index.js';
import { createRedactor } from '../store/index.js';
import type { CommandContext } from './context.js';

export interface ExportOptions {
  batch?: string;
  out: string;
  includeHidden?: boolean;
}

export async function exportCommand(
  context: CommandContext,
  ids: number[],
  options: ExportOptions,
): Promise<number> {
  if (ids.length > 0 === (options.batch !== undefined)) {
    throw new ProctorError('USAGE', 'give job ids or --batch ID, not both and not neither');
  }
  if (ids.length > MAX_EXPORT_JOBS) {
    throw new ProctorError('USAGE', `at most ${MAX_EXPORT_JOBS} job ids, got ${ids.length}`);
  }
  const out = resolve(options.out);
  if ((await stat(out).catch(() => null))?.isDirectory()) {
    throw new ProctorError('USAGE', `--out: ${options.out} is a folder; give a file name`);
  }
  if (!(await stat(dirname(out)).catch(() => null))?.isDirectory()) {
    throw new ProctorError(
      'USAGE',
      `--out: no folder ${dirname(out)} to write ${options.out} into`,
    );
  }
  const store = context.openStore();
  try {
    let jobs: Job[];
    if (options.batch !== undefined) jobs = await exportBatchJobs(store, options.batch);
    else {
      jobs = [];
      for (const id of [...new Set(ids)]) {
        const job = await store.getJob(id);
        if (!job) throw new ProctorError('JOB_NOT_FOUND', `no job ${id}`);
        jobs.push(job);
      }
    }
    const redactor = createRedactor({ home: homedir(), secrets: knownSecrets(context.config) });
    const artifacts = openArtifactStore(context.config, store, { redactor, clock: context.clock });
    const result = await exportJobs(
      { store, artifacts, redactor },
      jobs,
      options.includeHidden ? { includeHidden: true } : {},
    );
    const temporary = join(dirname(out), `.${randomUUID()}.partial`);
    try {
      await writeFile(temporary, result.archive, { mode: 0o600, flag: 'wx' });
      await rename(temporary, out);
    } catch (error) {
      await rm(temporary, { force: true });
      throw error;
    }
    context.io.out(
      `wrote ${options.out}: ${result.jobs} jobs, ${result.files} files, ${result.archive.length} bytes`,
    );
    return 0;
  } finally {
    await store.close();
  }
}
