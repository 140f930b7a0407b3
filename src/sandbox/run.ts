// Runs a short-lived container to completion: create (through the isolation profile), attach,
// start, wait with a deadline, and always remove. Output is captured bounded (the profile
// turns Docker's own logging off, so attach is the only copy). Used by the init, probe and
// capture steps; long-lived solver and evaluator containers use exec instead.
import { PassThrough } from 'node:stream';
import type { DockerClient } from './docker.js';
import { isConflict, isNotFound } from './docker.js';
import { createOutputBuffer } from './output-buffer.js';
import { hardenedContainerOptions, type SandboxSpec } from './profile.js';
import { ProctorError, describeError } from '../errors.js';

export interface RunOptions {
  timeoutMs: number;
  /** Bytes kept per stream (head and tail). Default 64 KiB. */
  outputBytes?: number;
  /**
   * Keep stdout as raw bytes instead: its first `rawStdoutBytes` bytes exactly (a patch, say,
   * read through patch_bytes + 1), counting the rest. Default: off.
   */
  rawStdoutBytes?: number;
  signal?: AbortSignal;
  /**
   * The container's name: a name the engine already holds makes the create fail with a
   * DOCKER_ERROR whose data has `nameTaken` (template.ts uses this as a lock between processes).
   */
  name?: string;
}

export interface RunResult {
  exitCode: number | null;
  timedOut: boolean;
  oomKilled: boolean;
  stdout: string;
  stderr: string;
  /** With rawStdoutBytes: the first bytes of stdout, and how many there were in all. */
  rawStdout?: Buffer;
  stdoutBytes: number;
  durationMs: number;
}

/** Keeps the first `limit` bytes of a stream exactly, and counts the rest. */
function createPrefixBuffer(limit: number) {
  const chunks: Buffer[] = [];
  let kept = 0;
  let total = 0;
  return {
    write(chunk: Buffer) {
      total += chunk.length;
      if (kept < limit) {
        const part = chunk.subarray(0, limit - kept);
        chunks.push(Buffer.from(part));
        kept += part.length;
      }
    },
    bytes: () => Buffer.concat(chunks, kept),
    get total() {
      return total;
    },
  };
}

export async function runToCompletion(
  docker: DockerClient,
  spec: SandboxSpec,
  options: RunOptions,
): Promise<RunResult> {
  const started = Date.now();
  const limit = options.outputBytes ?? 64 * 1024;
  const stdout = createOutputBuffer(limit);
  const stderr = createOutputBuffer(limit);
  const raw =
    options.rawStdoutBytes === undefined ? undefined : createPrefixBuffer(options.rawStdoutBytes);
  let container;
  try {
    container = await docker.createContainer({
      ...hardenedContainerOptions(spec),
      ...(options.name === undefined ? {} : { name: options.name }),
    });
  } catch (error) {
    if (options.name !== undefined && isConflict(error)) {
      throw new ProctorError('DOCKER_ERROR', `container ${options.name} exists`, {
        cause: error,
        data: { nameTaken: options.name },
      });
    }
    throw new ProctorError(
      'DOCKER_ERROR',
      `cannot create the ${spec.role} container: ${describeError(error)}`,
      {
        cause: error,
      },
    );
  }
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  try {
    const stream = await container.attach({
      stream: true,
      stdout: true,
      stderr: true,
      hijack: true,
    });
    const out = new PassThrough();
    const err = new PassThrough();
    out.on('data', (chunk: Buffer) => (raw ? raw.write(chunk) : stdout.write(chunk)));
    err.on('data', (chunk: Buffer) => stderr.write(chunk));
    docker.modem.demuxStream(stream, out, err);
    const ended = new Promise<void>((resolve) => {
      stream.on('end', resolve);
      stream.on('close', resolve);
      stream.on('error', () => resolve());
    });

    let timedOut = false;
    const kill = async () => {
      try {
        await container.kill({ signal: 'SIGKILL' });
      } catch (error) {
        if (!isNotFound(error) && !isConflict(error)) throw error;
      }
    };
    const deadline = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        timedOut = true;
        resolve();
      }, options.timeoutMs);
      if (options.signal) {
        onAbort = () => resolve();
        if (options.signal.aborted) resolve();
        options.signal.addEventListener('abort', onAbort, { once: true });
      }
    });
    await container.start();
    const waited = container.wait() as Promise<{ StatusCode: number }>;
    const first = await Promise.race([
      waited.then(() => 'exited' as const),
      deadline.then(() => 'deadline' as const),
    ]);
    if (first === 'deadline') await kill();
    const status = await waited;
    // A detached descendant cannot outlive the container, so the stream ends with it; the
    // bound here is only against an engine that never closes it.
    await Promise.race([ended, new Promise((resolve) => setTimeout(resolve, 1_000))]);
    (stream as unknown as { destroy(): void }).destroy();
    const inspected = await container.inspect();
    return {
      exitCode: first === 'deadline' ? null : status.StatusCode,
      timedOut,
      oomKilled: inspected.State.OOMKilled,
      stdout: raw ? '' : stdout.text(),
      stderr: stderr.text(),
      ...(raw ? { rawStdout: raw.bytes() } : {}),
      stdoutBytes: raw ? raw.total : stdout.totalBytes,
      durationMs: Date.now() - started,
    };
  } finally {
    clearTimeout(timer);
    if (onAbort) options.signal?.removeEventListener('abort', onAbort);
    // A 409 (with force) is a removal in progress: another process took a named container
    // that had exited for a stale lock (template.ts removeStaleLock). It goes either way.
    await container.remove({ force: true, v: false }).catch((error: unknown) => {
      if (!isNotFound(error) && !isConflict(error)) throw error;
    });
  }
}
