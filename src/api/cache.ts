// The answer cache of the API's read routes. Read answers are reused while the store's data
// version is unchanged: a dashboard polling a large table, or a report of a 100,000-job batch,
// costs one version check per request, and never gets an answer that misses a commit made
// before its request arrived. An answer with rates and ETAs, which move with the clock, is
// reused within the same second only. The cache is keyed by the request URL and holds
// successful answers only, so a hit skips parsing the query too: that URL parsed before.
// Bodies are kept encoded, ready to send; the oldest go first past either bound.
import type { Context } from 'hono';
import type { Clock } from '../clock.js';
import type { JobStore } from '../queue/index.js';

/** How many read answers the cache keeps, and their bytes at most; the oldest go first. */
export const MAX_CACHED_ANSWERS = 256;
export const MAX_CACHED_BYTES = 16 * 1024 * 1024;

const utf8 = new TextEncoder();

export interface FreshOptions {
  /** The answer moves with the clock (rates, ETAs): reuse it within the same second only. */
  clocked?: boolean;
}

/** Answers `compute()` as JSON, or the same answer again while the data has not changed. */
export type Fresh = (
  c: Context,
  compute: () => Promise<unknown>,
  options?: FreshOptions,
) => Promise<Response>;

export function createAnswerCache(deps: { store: Pick<JobStore, 'dataVersion'>; clock: Clock }) {
  const { store, clock } = deps;
  const answers = new Map<string, { version: string; body: Uint8Array<ArrayBuffer> }>();
  let cachedBytes = 0;
  const fresh: Fresh = async (c, compute, { clocked = false } = {}) => {
    const key = clocked ? `${Math.floor(clock.now() / 1000)} ${c.req.url}` : c.req.url;
    // Read before computing: a commit that lands meanwhile makes the next request recompute.
    const version = await store.dataVersion();
    let hit = answers.get(key);
    if (hit?.version !== version) {
      hit = { version, body: utf8.encode(JSON.stringify(await compute())) };
      cachedBytes -= answers.get(key)?.body.length ?? 0;
      answers.delete(key);
      answers.set(key, hit);
      cachedBytes += hit.body.length;
      for (const [oldest, answer] of answers) {
        if (answers.size <= MAX_CACHED_ANSWERS && cachedBytes <= MAX_CACHED_BYTES) break;
        if (oldest === key) break; // the answer being sent stays, however large
        answers.delete(oldest);
        cachedBytes -= answer.body.length;
      }
    }
    return c.body(hit.body, 200, { 'Content-Type': 'application/json' });
  };
  return { fresh, size: () => answers.size, bytes: () => cachedBytes };
}
