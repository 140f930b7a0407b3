// Wake-ups across hosts: NOTIFY on the `proctor_jobs` channel, with the kind as payload, in
// every transaction that makes jobs claimable (enqueue, release, reclaim, a completion's
// children); PostgreSQL delivers it at commit, to one LISTEN connection per listening process.
// Claimers still poll: a notification lost while a listener reconnects costs one poll.
import type pg from 'pg';
import { JOB_KINDS, type JobKind } from '../constants.js';
import type { Queryable } from './sql.js';

export const CHANNEL = 'proctor_jobs';
const RECONNECT_MS = 1_000;

/** Runs inside the transaction that made jobs of these kinds claimable. */
export async function notifyKinds(db: Queryable, kinds: Iterable<string>): Promise<void> {
  const distinct = [...new Set(kinds)];
  if (distinct.length === 0) return;
  await db.query('SELECT pg_notify($1, k) FROM unnest($2::text[]) AS k', [CHANNEL, distinct]);
}

/**
 * Listens on one dedicated connection until stopped; reconnects after a second when the
 * connection drops (a restarted server, a cut network).
 */
export async function listen(
  makeClient: () => pg.Client,
  listener: (kind: JobKind) => void,
): Promise<() => Promise<void>> {
  let stopped = false;
  let client: pg.Client | undefined;
  let timer: NodeJS.Timeout | undefined;

  const connect = async (): Promise<void> => {
    const next = makeClient();
    next.on('notification', (message) => {
      const kind = message.payload as JobKind;
      if ((JOB_KINDS as readonly string[]).includes(kind)) listener(kind);
    });
    next.on('error', () => retry(next));
    next.on('end', () => retry(next));
    await next.connect();
    await next.query(`LISTEN ${CHANNEL}`);
    client = next;
  };
  const retry = (dead: pg.Client) => {
    if (stopped || client !== dead) return;
    client = undefined;
    void dead.end().catch(() => undefined);
    timer = setTimeout(() => {
      timer = undefined;
      if (!stopped) void connect().catch(() => retryLater());
    }, RECONNECT_MS);
  };
  const retryLater = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      timer = undefined;
      if (!stopped) void connect().catch(() => retryLater());
    }, RECONNECT_MS);
  };

  await connect();
  return async () => {
    stopped = true;
    if (timer) clearTimeout(timer);
    const last = client;
    client = undefined;
    await last?.end().catch(() => undefined);
  };
}
