// `proctor grade BUNDLE --patch FILE [--wait]`: stores the candidate diff as an input
// artifact and enqueues one grade job. With --wait the verdict, reason and log follow, and the
// last stdout line is the gate line `tests_hash=<sha256>`; exit 0 PASS, 1 FAIL.
import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { ProctorError } from '../errors.js';
import { createLogger } from '../logger.js';
import { gateLine, loadBundle, testsHash } from '../oracle/index.js';
import { DEFAULT_MAX_ARTIFACT_BYTES, containsSecret } from '../store/index.js';
import { enqueueWithCandidates } from '../queue/index.js';
import { createRuntime, type GradeResult } from '../workers/index.js';
import { type CommandContext } from './context.js';
import { waitForJobs } from './wait.js';

async function readPatch(file: string): Promise<Buffer> {
  if (file === '-') {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of process.stdin) {
      size += (chunk as Buffer).length;
      if (size > DEFAULT_MAX_ARTIFACT_BYTES) {
        throw new ProctorError(
          'USAGE',
          `the patch on stdin is larger than ${DEFAULT_MAX_ARTIFACT_BYTES} bytes`,
        );
      }
      chunks.push(chunk as Buffer);
    }
    return Buffer.concat(chunks);
  }
  let info;
  try {
    info = await stat(file);
  } catch (error) {
    throw new ProctorError(
      'USAGE',
      `--patch ${file}: ${(error as NodeJS.ErrnoException).code ?? 'cannot read'}`,
    );
  }
  if (!info.isFile()) throw new ProctorError('USAGE', `--patch ${file}: not a regular file`);
  if (info.size > DEFAULT_MAX_ARTIFACT_BYTES) {
    throw new ProctorError(
      'USAGE',
      `--patch ${file}: larger than ${DEFAULT_MAX_ARTIFACT_BYTES} bytes`,
    );
  }
  return readFile(file);
}

export async function gradeCommand(
  context: CommandContext,
  bundlePath: string,
  options: { patch: string; wait?: boolean; json?: boolean },
): Promise<number> {
  const { io, config } = context;
  const bundle = await loadBundle(bundlePath);
  const patch = await readPatch(options.patch);
  const runtime = createRuntime(config, context.clock, createLogger({ level: 'warn' }));
  try {
    if (containsSecret(patch, runtime.secrets)) {
      throw new ProctorError(
        'USAGE',
        `--patch ${options.patch} contains a provider key from this environment; refusing to store it`,
      );
    }
    // Stored by content and registered with the job in one transaction: a failed enqueue
    // leaves no artifact behind, and the same bytes graded again are not stored twice.
    const enqueued = await enqueueWithCandidates(runtime, [patch], ([candidate], inputs) =>
      runtime.store.enqueue({ kind: 'grade', payload: { bundle: bundle.dir, candidate } }, inputs),
    );
    const jobId = enqueued.job.id;
    const sha256 = createHash('sha256').update(patch).digest('hex');
    if (!options.wait) {
      io.out(`job ${jobId}: grade of ${bundle.id} enqueued (candidate ${sha256})`);
      return 0;
    }
    const { jobs, interrupted } = await waitForJobs(
      context,
      runtime,
      { jobId, label: 'grade', verdictNames: { PASS: 'PASS', FAIL: 'FAIL' } },
      { progress: false, isTty: false },
    );
    if (interrupted) return 130;
    const job = jobs[0];
    if (!job) throw new ProctorError('JOB_NOT_FOUND', `job ${jobId} disappeared`);
    if (job.status === 'failed') {
      io.err(`proctor: grade job ${jobId} failed: ${job.lastError ?? 'unknown error'}`);
      return 2;
    }
    if (job.status !== 'done') {
      io.out(`job ${jobId}: ${job.status}`);
      io.out(gateLine(testsHash([])));
      return 1;
    }
    const result = job.result as GradeResult;
    if (options.json) io.out(JSON.stringify({ job: jobId, ...result }));
    else {
      io.out(`job ${jobId}: ${result.verdict} ${result.reason}: ${result.detail}`);
      io.out(`oracle log: artifact ${result.log} (proctor status ${jobId})`);
    }
    io.out(gateLine(result.testsHash));
    return result.verdict === 'PASS' ? 0 : 1;
  } finally {
    await runtime.close();
  }
}
