// The SQLite and PostgreSQL schemas must stay mirrors. The type-level checks below fail
// `npm run typecheck` (TS2322) as soon as a column, its nullability, its default or its JS
// type differs between the two (rows and inserts alike); the runtime checks compare the SQL
// names of columns and indexes, which the types cannot see.
import { getTableColumns } from 'drizzle-orm';
import { getTableConfig as pgConfig } from 'drizzle-orm/pg-core';
import { getTableConfig as liteConfig } from 'drizzle-orm/sqlite-core';
import { describe, expect, it } from 'vitest';
import * as pg from '../../src/queue/pg/schema.js';
import * as lite from '../../src/queue/schema.js';

/** True exactly when A and B are the same type (not merely assignable either way). */
type Eq<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;

const parity: {
  jobsRow: Eq<typeof pg.jobs.$inferSelect, typeof lite.jobs.$inferSelect>;
  jobsInsert: Eq<typeof pg.jobs.$inferInsert, typeof lite.jobs.$inferInsert>;
  batchesRow: Eq<typeof pg.batches.$inferSelect, typeof lite.batches.$inferSelect>;
  batchesInsert: Eq<typeof pg.batches.$inferInsert, typeof lite.batches.$inferInsert>;
  artifactsRow: Eq<typeof pg.artifacts.$inferSelect, typeof lite.artifacts.$inferSelect>;
  artifactsInsert: Eq<typeof pg.artifacts.$inferInsert, typeof lite.artifacts.$inferInsert>;
  tasksRow: Eq<typeof pg.tasks.$inferSelect, typeof lite.tasks.$inferSelect>;
  tasksInsert: Eq<typeof pg.tasks.$inferInsert, typeof lite.tasks.$inferInsert>;
  batchSuitesRow: Eq<typeof pg.batchSuites.$inferSelect, typeof lite.batchSuites.$inferSelect>;
  batchSuitesInsert: Eq<typeof pg.batchSuites.$inferInsert, typeof lite.batchSuites.$inferInsert>;
  testStatusesRow: Eq<typeof pg.testStatuses.$inferSelect, typeof lite.testStatuses.$inferSelect>;
  testStatusesInsert: Eq<
    typeof pg.testStatuses.$inferInsert,
    typeof lite.testStatuses.$inferInsert
  >;
  jobProgressRow: Eq<typeof pg.jobProgress.$inferSelect, typeof lite.jobProgress.$inferSelect>;
  jobProgressInsert: Eq<typeof pg.jobProgress.$inferInsert, typeof lite.jobProgress.$inferInsert>;
} = {
  jobsRow: true,
  jobsInsert: true,
  batchesRow: true,
  batchesInsert: true,
  artifactsRow: true,
  artifactsInsert: true,
  tasksRow: true,
  tasksInsert: true,
  batchSuitesRow: true,
  batchSuitesInsert: true,
  testStatusesRow: true,
  testStatusesInsert: true,
  jobProgressRow: true,
  jobProgressInsert: true,
};

const pairs = [
  ['jobs', pg.jobs, lite.jobs],
  ['batches', pg.batches, lite.batches],
  ['artifacts', pg.artifacts, lite.artifacts],
  ['tasks', pg.tasks, lite.tasks],
  ['batch_suites', pg.batchSuites, lite.batchSuites],
  ['test_statuses', pg.testStatuses, lite.testStatuses],
  ['job_progress', pg.jobProgress, lite.jobProgress],
] as const;

/**
 * What PostgreSQL has and SQLite has not, on purpose: the bytes of artifacts live in the
 * database there (`artifact_blobs`, src/queue/pg/artifacts.ts), in files beside SQLite.
 */
const PG_ONLY_INDEXES = new Set(['artifacts_sha256']);
const PG_ONLY_TABLES = [pg.artifactBlobs];

describe('the PostgreSQL schema mirrors the SQLite one', () => {
  it('agrees on every row and insert type (checked by the compiler)', () => {
    expect(Object.values(parity).every(Boolean)).toBe(true);
  });

  it.each(pairs)('%s: the same SQL column names, indexes and checks', (_name, p, l) => {
    const names = (t: Record<string, { name: string }>) =>
      Object.entries(t).map(([key, c]) => `${key}=${c.name}`);
    expect(names(getTableColumns(p))).toEqual(names(getTableColumns(l)));
    const pc = pgConfig(p);
    const lc = liteConfig(l);
    expect(pc.name).toBe(lc.name);
    const shared = pc.indexes.filter((i) => !PG_ONLY_INDEXES.has(i.config.name ?? ''));
    expect(shared.map((i) => i.config.name).sort()).toEqual(
      lc.indexes.map((i) => i.config.name).sort(),
    );
    expect(pc.checks.map((c) => c.name).sort()).toEqual(lc.checks.map((c) => c.name).sort());
    expect(pc.foreignKeys.length).toBe(lc.foreignKeys.length);
  });

  it('has no other table or index of its own than those of the artifact bytes', () => {
    const mirrored = new Set<unknown>(pairs.map(([, p]) => p));
    const own = Object.values(pg).filter(
      (value) => typeof value === 'object' && value !== null && !mirrored.has(value),
    );
    const tables = own.filter((value) => {
      try {
        return pgConfig(value as typeof pg.jobs).name !== undefined;
      } catch {
        return false;
      }
    });
    expect(tables).toEqual(PG_ONLY_TABLES);
  });
});
