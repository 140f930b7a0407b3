// Talking to the daemon about images: one deadline for a pull or build and its caller's
// abort, errors that say which fired (or that the engine is down), inspect that tells "absent"
// from "failed", and a constant-space follower for the daemon's JSON progress streams.
import { finished } from 'node:stream';
import type { ImageInspectInfo } from 'dockerode';
import { ProctorError, describeError, isProctorError } from '../errors.js';
import { isNotFound, type DockerClient } from './docker.js';

/** A progress line longer than this is dropped rather than buffered. */
const MAX_LINE = 1024 * 1024;

export const imageInvalid = (message: string, data?: Record<string, unknown>) =>
  new ProctorError('IMAGE_INVALID', message, data ? { data } : {});

export async function inspectImage(
  docker: DockerClient,
  name: string,
): Promise<ImageInspectInfo | undefined> {
  try {
    return await docker.getImage(name).inspect();
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw dockerFailure(error, `inspecting image ${name}`);
  }
}

export interface Deadline {
  signal: AbortSignal;
  failure(error: unknown, what: string): ProctorError;
}

/**
 * One signal for the time limit and the caller's abort, and errors that say which fired; `hint`,
 * when given, follows a timeout's message (where the limit is set).
 */
export function deadline(
  timeoutMs: number,
  outer: AbortSignal | undefined,
  hint?: string,
): Deadline {
  if (!(Number.isFinite(timeoutMs) && timeoutMs > 0)) {
    throw new ProctorError(
      'USAGE',
      `Expected \`timeoutMs\` to be a finite number > 0, got \`${timeoutMs}\``,
    );
  }
  const timer = AbortSignal.timeout(timeoutMs);
  const signal = outer ? AbortSignal.any([timer, outer]) : timer;
  return {
    signal,
    failure(error, what) {
      if (isProctorError(error) || !signal.aborted) return dockerFailure(error, what);
      const why = timer.aborted
        ? `timed out after ${timeoutMs} ms${hint ? ` (${hint})` : ''}`
        : 'was aborted';
      return new ProctorError('DOCKER_ERROR', `${what} ${why}`, { cause: error });
    },
  };
}

export function dockerFailure(error: unknown, what: string): ProctorError {
  if (isProctorError(error)) return error;
  const code = (error as { code?: unknown } | null)?.code;
  const down = code === 'ECONNREFUSED' || code === 'ENOENT' || code === 'EACCES';
  const message = `${what}: ${describeError(error)}`;
  return new ProctorError(down ? 'DOCKER_UNAVAILABLE' : 'DOCKER_ERROR', message, { cause: error });
}

/**
 * Follows a daemon JSON-lines progress stream to its end in constant space (dockerode's
 * followProgress keeps every event). A throwing `onEvent` ends the stream with that error.
 */
export function followJson(
  stream: NodeJS.ReadableStream,
  signal: AbortSignal,
  onEvent: (event: Record<string, unknown>) => void,
): Promise<void> {
  const readable = stream as NodeJS.ReadableStream & { destroy(error?: Error): void };
  return new Promise((done, fail) => {
    let pending = '';
    let settled = false;
    const settle = (error?: unknown) => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      if (error === undefined) return done();
      readable.destroy();
      fail(error instanceof Error ? error : new Error(describeError(error)));
    };
    const onAbort = () => settle(signal.reason);
    const line = (text: string) => {
      let event: unknown;
      try {
        event = JSON.parse(text);
      } catch {
        return; // not JSON: nothing to report (the daemon is trusted not to hide errors there)
      }
      if (event && typeof event === 'object') onEvent(event as Record<string, unknown>);
    };
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    readable.setEncoding('utf8');
    readable.on('data', (chunk: string) => {
      const lines = (pending + chunk).split('\n');
      pending = lines.pop() ?? '';
      if (pending.length > MAX_LINE) pending = '';
      try {
        lines.forEach(line);
      } catch (error) {
        settle(error);
      }
    });
    finished(readable, (error) => {
      try {
        if (!error && pending.trim()) line(pending);
      } catch (lineError) {
        return settle(lineError);
      }
      settle(error ?? undefined);
    });
  });
}
