// Enqueueing jobs that read candidate patches, for `proctor grade` and the API. A candidate is
// identified by its content (the SHA-256 of its bytes): bytes already registered as an input
// are reused, so a replayed request names the same artifact, is the same request, and stores
// nothing new. New bytes are written first and registered in the enqueue's own transaction;
// when the enqueue is refused or fails, exactly the files written for it are removed. A crash
// between the write and the transaction leaves only a file, which the workers' sweep removes.
import { createHash } from 'node:crypto';
import { isProctorError } from '../errors.js';
import type { ArtifactRecord, ArtifactStore } from '../store/index.js';
import type { EnqueueInputs, JobStore } from './store.js';

export const CANDIDATE_NAME = 'candidate.diff';
export const CANDIDATE_MEDIA_TYPE = 'text/x-diff';

export interface CandidateDeps {
  store: JobStore;
  artifacts: ArtifactStore;
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/**
 * Stores each patch as a candidate artifact (or finds it stored), then calls `enqueue` with
 * the artifact id of each patch, in order, and the inputs to register in its transaction.
 * `signal` stops the work between writes; an aborted or failed enqueue leaves no new file.
 */
export async function enqueueWithCandidates<T>(
  deps: CandidateDeps,
  patches: readonly Buffer[],
  enqueue: (ids: string[], inputs: EnqueueInputs) => Promise<T>,
  signal?: AbortSignal,
): Promise<T> {
  const digests = patches.map(sha256);
  const sizeOf = new Map(digests.map((digest, i) => [digest, patches[i]?.length]));
  // At most two rounds. The second follows a refusal that a new look-up may avoid: a
  // concurrent twin of this request stored the same bytes first, so the key now names its
  // artifact (IDEMPOTENCY_CONFLICT; the look-up finds that artifact, and the replay matches);
  // or the input sweep removed a reused artifact between the look-up and the enqueue
  // (ARTIFACT_NOT_FOUND, rare: it only removes what no job names; every patch is written anew).
  let lookUp = true;
  let conflict: { error: unknown; digests: string[] } | undefined;
  for (let round = 0; ; round++) {
    const known =
      lookUp && patches.length > 0 ? await deps.store.findInputs(CANDIDATE_NAME, digests) : [];
    const idOf = new Map<string, string>();
    for (const record of known) {
      // The same digest with another size would be a SHA-256 collision: never reuse it.
      if (sizeOf.get(record.sha256) === record.size) idOf.set(record.sha256, record.id);
    }
    // Nothing this request wrote is stored by anyone else: the conflict is a real one.
    if (conflict && !conflict.digests.some((digest) => idOf.has(digest))) throw conflict.error;
    const reused = [...idOf.values()];
    const written: ArtifactRecord[] = [];
    try {
      for (const [i, patch] of patches.entries()) {
        const digest = digests[i] as string;
        if (idOf.has(digest)) continue;
        signal?.throwIfAborted();
        const record = await deps.artifacts.write({
          name: CANDIDATE_NAME,
          mediaType: CANDIDATE_MEDIA_TYPE,
          bytes: patch,
          // A diff is graded byte for byte: masking would change what is applied.
          redact: false,
        });
        written.push(record);
        idOf.set(digest, record.id);
      }
      signal?.throwIfAborted();
      return await enqueue(
        digests.map((digest) => idOf.get(digest) as string),
        { inputs: written, reused },
      );
    } catch (error) {
      await discardUnregistered(deps, written);
      if (round > 0) throw error;
      if (written.length > 0 && isProctorError(error, 'IDEMPOTENCY_CONFLICT')) {
        conflict = { error, digests: written.map((r) => r.sha256) };
        continue;
      }
      if (reused.length > 0 && isProctorError(error, 'ARTIFACT_NOT_FOUND')) {
        lookUp = false;
        continue;
      }
      throw error;
    }
  }
}

/** Removes the files of records the failed enqueue did not register, and only those. */
async function discardUnregistered(deps: CandidateDeps, records: readonly ArtifactRecord[]) {
  await Promise.allSettled(
    records.map(async (record) => {
      if ((await deps.store.getArtifact(record.id)) === undefined) {
        await deps.artifacts.discard(record);
      }
    }),
  );
}
