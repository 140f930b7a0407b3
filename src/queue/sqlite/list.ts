// Bounded reads: keyset pages of jobs and batches (never OFFSET, so a page costs the same at
// job 10 as at job 1,000,000) and counts by status (batch progress: batch-counts.ts).
import { and, asc, count, desc, eq, gt, gte, lt, sql, type SQL } from 'drizzle-orm';
import { ProctorError } from '../../errors.js';
import { JOB_STATUSES } from '../constants.js';
import type { Db } from '../db.js';
import { batches, jobs } from '../schema.js';
import {
  DEFAULT_PAGE,
  MAX_PAGE,
  type JobFilter,
  type PageRequest,
  type StatusCounts,
} from '../store.js';

interface Cursor {
  order: 'asc' | 'desc';
  after: number | string;
}

export function encodeCursor(cursor: Cursor): string {
  return Buffer.from(JSON.stringify([cursor.order, cursor.after])).toString('base64url');
}

export function decodeCursor(text: string, order: 'asc' | 'desc'): number | string {
  try {
    const value: unknown = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
    if (
      Array.isArray(value) &&
      value.length === 2 &&
      value[0] === order &&
      (typeof value[1] === 'number' || typeof value[1] === 'string')
    ) {
      return value[1];
    }
  } catch {
    // fall through to the error below
  }
  throw new ProctorError('CURSOR_INVALID', `invalid cursor ${JSON.stringify(text.slice(0, 80))}`);
}

export function pageLimit(page: PageRequest): number {
  const limit = page.limit ?? DEFAULT_PAGE;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE) {
    throw new ProctorError(
      'USAGE',
      `page limit must be an integer from 1 to ${MAX_PAGE}, got ${limit}`,
    );
  }
  return limit;
}

export function listJobRows(db: Db, filter: JobFilter, page: PageRequest) {
  const order = page.order ?? 'desc';
  const limit = pageLimit(page);
  const where: SQL[] = [];
  if (filter.status) where.push(eq(jobs.status, filter.status));
  if (filter.kind) where.push(eq(jobs.kind, filter.kind));
  if (filter.batchId) where.push(eq(jobs.batchId, filter.batchId));
  if (filter.parentId) where.push(eq(jobs.parentId, filter.parentId));
  if (page.cursor) {
    const after = Number(decodeCursor(page.cursor, order));
    where.push(order === 'asc' ? gt(jobs.id, after) : lt(jobs.id, after));
  }
  const rows = db
    .select()
    .from(jobs)
    .where(and(...where))
    .orderBy(order === 'asc' ? asc(jobs.id) : desc(jobs.id))
    .limit(limit + 1)
    .all();
  const items = rows.slice(0, limit);
  const last = items.at(-1);
  const nextCursor = rows.length > limit && last ? encodeCursor({ order, after: last.id }) : null;
  return { items, nextCursor };
}

export function listBatchRows(db: Db, page: PageRequest) {
  const order = page.order ?? 'desc';
  const limit = pageLimit(page);
  // Batch ids start with their creation time (see newBatchId), so id order is age order.
  const after = page.cursor ? String(decodeCursor(page.cursor, order)) : undefined;
  const rows = db
    .select()
    .from(batches)
    .where(
      after === undefined
        ? undefined
        : order === 'asc'
          ? gt(batches.id, after)
          : lt(batches.id, after),
    )
    .orderBy(order === 'asc' ? asc(batches.id) : desc(batches.id))
    .limit(limit + 1)
    .all();
  const items = rows.slice(0, limit);
  const last = items.at(-1);
  const nextCursor = rows.length > limit && last ? encodeCursor({ order, after: last.id }) : null;
  return { items, nextCursor };
}

export function emptyCounts(): StatusCounts {
  return Object.fromEntries(JOB_STATUSES.map((s) => [s, 0])) as StatusCounts;
}

export function countJobs(db: Db, filter: Omit<JobFilter, 'status'>): StatusCounts {
  const where: SQL[] = [];
  if (filter.kind) where.push(eq(jobs.kind, filter.kind));
  if (filter.batchId) where.push(eq(jobs.batchId, filter.batchId));
  if (filter.parentId) where.push(eq(jobs.parentId, filter.parentId));
  const counts = emptyCounts();
  const rows = db
    .select({ status: jobs.status, n: count() })
    .from(jobs)
    .where(and(...where))
    .groupBy(jobs.status)
    .all();
  for (const row of rows) counts[row.status] = row.n;
  return counts;
}

export function countFinishedSince(db: Db, since: number): number {
  const [row] = db.select({ n: count() }).from(jobs).where(gte(jobs.finishedAt, since)).all();
  return row?.n ?? 0;
}

/** Done jobs by the `verdict` of their result (PASS / FAIL), for progress lines. */
export function verdictCounts(db: Db, filter: Omit<JobFilter, 'status'>): Record<string, number> {
  const where: SQL[] = [eq(jobs.status, 'done')];
  if (filter.kind) where.push(eq(jobs.kind, filter.kind));
  if (filter.batchId) where.push(eq(jobs.batchId, filter.batchId));
  if (filter.parentId) where.push(eq(jobs.parentId, filter.parentId));
  // A validate job has no verdict: its validity (valid, invalid) counts in its place.
  const verdict = sql<
    string | null
  >`coalesce(json_extract(${jobs.result}, '$.verdict'), json_extract(${jobs.result}, '$.validity'))`;
  const rows = db
    .select({ verdict, n: count() })
    .from(jobs)
    .where(and(...where))
    .groupBy(verdict)
    .all();
  const counts: Record<string, number> = {};
  for (const row of rows) counts[row.verdict ?? 'none'] = row.n;
  return counts;
}
