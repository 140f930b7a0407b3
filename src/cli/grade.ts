// `proctor grade BUNDLE --patch FILE [--wait]`: stores the candidate diff as an input
// artifact and enqueues one grade job. With --wait the verdict, reason and log follow, and the
// last stdout line is the gate line `tests_hash=<sha256>`; exit 0 PASS, 1 FAIL.
import { createHash } from 'node:crypto';
import { constants, open, type FileHandle } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import { ProctorError } from '../errors.js';
import { createLogger } from '../logger.js';
import { gateLine, loadBundle, testsHash } from '../oracle/index.js';
import { containsSecret } from '../store/index.js';
import { enqueueWithCandidates } from '../queue/index.js';
import { createRuntime, type GradeResult } from '../workers/index.js';
import { type CommandContext } from './context.js';
import { verdictText } from './table.js';
import { waitForJobs } from './wait.js';

const refuse = (file: string, what: string) =>
  new ProctorError('USAGE', `--patch ${file}: ${what}`);

function tooLarge(limit: number): string {
  return `larger than the task's patch_bytes (${limit} bytes)`;
}

function kindOf(info: Stats): string {
  if (info.isDirectory()) return 'a directory';
  if (info.isFIFO()) return 'a FIFO';
  if (info.isCharacterDevice()) return 'a character device';
  if (info.isBlockDevice()) return 'a block device';
  if (info.isSocket()) return 'a socket';
  return 'something';
}

async function readStdin(limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of process.stdin) {
    size += (chunk as Buffer).length;
    // Stop reading at once: leaving the loop destroys the stream, so a flood is not drained.
    if (size > limit) throw refuse('-', `the patch on stdin is ${tooLarge(limit)}`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/**
 * The candidate diff, at most `limit` bytes (the task's patch_bytes). A file is opened without
 * following a symlink and without blocking (a FIFO would otherwise wait for a writer), then
 * must be a regular file on its handle, so what is checked is what is read; no more than
 * `limit + 1` bytes are ever read.
 */
async function readPatch(file: string, limit: number): Promise<Buffer> {
  if (file === '-') return readStdin(limit);
  let handle: FileHandle;
  try {
    handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') throw refuse(file, 'a symlink; give the patch file itself');
    throw refuse(file, code ?? 'cannot read');
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw refuse(file, `${kindOf(info)}, not a regular file`);
    if (info.size > limit) throw refuse(file, tooLarge(limit));
    // One byte more than fstat reported: a file that grew meanwhile is refused, not cut.
    const buffer = Buffer.alloc(info.size + 1);
    let length = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, null);
      if (bytesRead === 0) break;
      length += bytesRead;
      if (length === buffer.length) throw refuse(file, 'changed while it was read');
    }
    return buffer.subarray(0, length);
  } finally {
    await handle.close();
  }
}

export async function gradeCommand(
  context: CommandContext,
  bundlePath: string,
  options: { patch: string; wait?: boolean; json?: boolean },
): Promise<number> {
  const { io, config } = context;
  const bundle = await loadBundle(bundlePath);
  // The bundle first: its patch_bytes bounds how much of the patch is read at all.
  const patch = await readPatch(options.patch, bundle.limits.patchBytes);
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
      { progress: false, isTty: false, pulls: true },
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
      io.out(`job ${jobId}: ${verdictText(result.verdict, result.reason, result.detail)}`);
      const hits = result.suspicious?.count ?? 0;
      // A flag, not a failure: the verdict above stands unless the task says tamper = "fail".
      if (hits > 0) io.out(`suspicious: ${hits} ${hits === 1 ? 'hit' : 'hits'} of the screen`);
      io.out(`oracle log: artifact ${result.log} (proctor status ${jobId})`);
    }
    io.out(gateLine(result.testsHash));
    return result.verdict === 'PASS' ? 0 : 1;
  } finally {
    await runtime.close();
  }
}
