// Bounded reads on PostgreSQL: the same keyset pages (and cursors) as SQLite's, counts by
// status and verdict, and batch progress.
import { decodeCursor, emptyCounts, encodeCursor, pageLimit } from '../sqlite/list.js';
import type { Batch, JobFilter, PageRequest, StatusCounts } from '../store.js';
import { BATCH_COLUMNS, JOB_COLUMNS, type JobRecord, type Queryable } from './sql.js';

/** WHERE clauses and values for a filter; placeholders start after `offset` values. */
function filterSql(filter: JobFilter, offset = 0): { where: string[]; values: unknown[] } {
  const where: string[] = [];
  const values: unknown[] = [];
  const add = (column: string, value: unknown) => {
    values.push(value);
    where.push(`${column} = $${offset + values.length}`);
  };
  if (filter.status) add('status', filter.status);
  if (filter.kind) add('kind', filter.kind);
  if (filter.batchId) add('batch_id', filter.batchId);
  if (filter.parentId) add('parent_id', filter.parentId);
  return { where, values };
}

const whereOf = (where: string[]) => (where.length > 0 ? `WHERE ${where.join(' AND ')}` : '');

export async function listJobRows(db: Queryable, filter: JobFilter, page: PageRequest) {
  const order = page.order ?? 'desc';
  const limit = pageLimit(page);
  const { where, values } = filterSql(filter);
  if (page.cursor) {
    values.push(Number(decodeCursor(page.cursor, order)));
    where.push(`id ${order === 'asc' ? '>' : '<'} $${values.length}`);
  }
  values.push(limit + 1);
  const { rows } = await db.query<JobRecord>(
    `SELECT ${JOB_COLUMNS} FROM jobs ${whereOf(where)} ORDER BY id ${order} LIMIT $${values.length}`,
    values,
  );
  const items = rows.slice(0, limit);
  const last = items.at(-1);
  const nextCursor = rows.length > limit && last ? encodeCursor({ order, after: last.id }) : null;
  return { items, nextCursor };
}

export async function listBatchRows(db: Queryable, page: PageRequest) {
  const order = page.order ?? 'desc';
  const limit = pageLimit(page);
  const values: unknown[] = [];
  let where = '';
  if (page.cursor) {
    values.push(String(decodeCursor(page.cursor, order)));
    // Batch ids start with their creation time; compare them bytewise, as SQLite does.
    where = `WHERE id COLLATE "C" ${order === 'asc' ? '>' : '<'} $1`;
  }
  values.push(limit + 1);
  const { rows } = await db.query<Batch>(
    `SELECT ${BATCH_COLUMNS} FROM batches ${where}
     ORDER BY id COLLATE "C" ${order} LIMIT $${values.length}`,
    values,
  );
  const items = rows.slice(0, limit);
  const last = items.at(-1);
  const nextCursor = rows.length > limit && last ? encodeCursor({ order, after: last.id }) : null;
  return { items, nextCursor };
}

export async function countJobs(
  db: Queryable,
  filter: Omit<JobFilter, 'status'>,
): Promise<StatusCounts> {
  const { where, values } = filterSql({ ...filter, status: undefined });
  const counts = emptyCounts();
  const { rows } = await db.query<{ status: keyof StatusCounts; n: number }>(
    `SELECT status, count(*) AS n FROM jobs ${whereOf(where)} GROUP BY status`,
    values,
  );
  for (const row of rows) counts[row.status] = row.n;
  return counts;
}

export async function countFinishedSince(db: Queryable, since: number): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    'SELECT count(*) AS n FROM jobs WHERE finished_at >= $1',
    [since],
  );
  return rows[0]?.n ?? 0;
}

/** Done jobs by the `verdict` of their result (else a validate job's `validity`). */
export async function verdictCounts(
  db: Queryable,
  filter: Omit<JobFilter, 'status'>,
): Promise<Record<string, number>> {
  const { where, values } = filterSql({ ...filter, status: 'done' });
  // ->> reads a JSON string as itself; a result that is not an object reads as no verdict.
  const verdict = `CASE WHEN jsonb_typeof(result::jsonb) = 'object'
    THEN coalesce(result::jsonb ->> 'verdict', result::jsonb ->> 'validity') END`;
  const { rows } = await db.query<{ verdict: string | null; n: number }>(
    `SELECT ${verdict} AS verdict, count(*) AS n FROM jobs ${whereOf(where)} GROUP BY 1`,
    values,
  );
  const counts: Record<string, number> = {};
  for (const row of rows) counts[row.verdict ?? 'none'] = row.n;
  return counts;
}
