// The handler of the `validate` kind: the full check of one bundle (its static checks again,
// since the folder may have changed since the enqueue, then its image resolved through the
// worker's image cache and HEAD read inside it), as the job attempt's owner so that a crash
// leaves no probe container the next worker would not remove.
//
// An invalid bundle is an answer, not a failure: the job is done and its result says why. Only
// a failure of the machinery (the engine went away) fails the attempt, and is tried again.
import { isRetryable } from '../errors.js';
import {
  checkImage,
  loadBundle,
  problemsOf,
  taskRecord,
  type Bundle,
  type TaskRecord,
} from '../oracle/index.js';
import type { PayloadOf } from '../queue/index.js';
import { asOwner, imageSummary, type ImageSummary, type OracleDeps } from './oracle-jobs.js';
import type { HandlerOutput, JobHandler } from './pool.js';
import { resolveForJob } from './pull-status.js';

/** What a validate job stores as its result. */
export interface ValidateResult {
  validity: 'valid' | 'invalid';
  /** The bundle folder checked. */
  dir: string;
  /** Null when the bundle did not load. */
  task: TaskRecord | null;
  /** The image identity of a valid bundle; null when it is invalid. */
  image: ImageSummary | null;
  /** Each problem as one line, `file: key: message`; empty when valid. */
  problems: string[];
  /** One line for listings: the identity, or the first problem. */
  detail: string;
}

/** Problems kept in a result; a bundle with more is no less invalid. */
const MAX_PROBLEMS = 100;

function invalid(dir: string, bundle: Bundle | null, problems: string[]): ValidateResult {
  const kept = problems.slice(0, MAX_PROBLEMS);
  const more = problems.length - kept.length;
  return {
    validity: 'invalid',
    dir,
    task: bundle && taskRecord(bundle),
    image: null,
    problems: more > 0 ? [...kept, `… and ${more} more`] : kept,
    detail: kept[0] ?? 'invalid',
  };
}

export function validateHandler(deps: OracleDeps): JobHandler {
  return async (context): Promise<HandlerOutput> => {
    const payload = context.payload as PayloadOf<'validate'>;
    let bundle: Bundle;
    try {
      bundle = await loadBundle(payload.bundle);
    } catch (error) {
      if (isRetryable(error)) throw error;
      return { result: invalid(payload.bundle, null, problemsOf(error)) };
    }
    const check = await asOwner(deps, context, (owner) =>
      checkImage(bundle, {
        docker: deps.docker,
        resolve: (b) => resolveForJob(deps, context, b),
        owner,
        uid: deps.sandbox.uid,
        gid: deps.sandbox.gid,
        ...(deps.sandbox.runtime ? { runtime: deps.sandbox.runtime } : {}),
        signal: context.signal,
      }),
    );
    if (!check.ok) return { result: invalid(bundle.dir, bundle, check.problems) };
    const image = imageSummary(check);
    const result: ValidateResult = {
      validity: 'valid',
      dir: bundle.dir,
      task: taskRecord(bundle),
      image,
      problems: [],
      detail: image.portable ? `image ${image.digest}` : `local_build ${image.imageId}`,
    };
    return { result };
  };
}
