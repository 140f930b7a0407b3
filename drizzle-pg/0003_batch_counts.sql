-- Custom SQL migration file, put your code below! --
-- Batch progress kept as it changes (the SQLite store's batch_counts, drizzle/0009), so that
-- batchProgress reads a few rows instead of counting the batch's jobs on every read.
--
-- Striped: each batch has up to 16 rows (shard = the writing backend's pid mod 16) whose sums
-- are the counts, so hosts' workers finishing jobs of one batch at once update different rows
-- instead of queueing on one (one hot row per batch halved the claim race, bench:scale (a)).
-- A shard's own counts may go negative (a job enqueued on one shard finishes on another);
-- only their sums mean anything.
--
-- Kept by statement-level triggers with transition tables: one upsert per statement however
-- many jobs it changed (a coalesced claim, a 20,000-job enqueue), and none for a statement
-- that changed no job's status or times (a heartbeat). Every write path is covered, whoever
-- adds it. Not in src/queue/pg/schema.ts: drizzle never reads or writes this table.
CREATE TABLE "batch_counts" (
	"batch_id" text NOT NULL,
	"shard" integer NOT NULL,
	"queued" bigint DEFAULT 0 NOT NULL,
	"running" bigint DEFAULT 0 NOT NULL,
	"done" bigint DEFAULT 0 NOT NULL,
	"failed" bigint DEFAULT 0 NOT NULL,
	"cancelled" bigint DEFAULT 0 NOT NULL,
	"first_started_at" bigint,
	"last_finished_at" bigint,
	PRIMARY KEY ("batch_id", "shard")
);
--> statement-breakpoint
INSERT INTO "batch_counts" ("batch_id", "shard", "queued", "running", "done", "failed", "cancelled", "first_started_at", "last_finished_at")
SELECT "batch_id", 0,
	count(*) FILTER (WHERE "status" = 'queued'), count(*) FILTER (WHERE "status" = 'running'),
	count(*) FILTER (WHERE "status" = 'done'), count(*) FILTER (WHERE "status" = 'failed'),
	count(*) FILTER (WHERE "status" = 'cancelled'), min("started_at"), max("finished_at")
FROM "jobs" WHERE "batch_id" IS NOT NULL GROUP BY "batch_id";
--> statement-breakpoint
-- Adds one statement's changes to this backend's shard of each batch they touch: +1 for a
-- job's new status, -1 for its old one; started and finished times only ever widen the span
-- (as on SQLite). Rows are upserted in batch order, so two statements on one shard never wait
-- on each other's rows in opposite orders. Only batches that still exist: a batch being
-- deleted (its jobs cascade) has its rows removed by batch_counts_batch_delete.
CREATE FUNCTION "batch_counts_change"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF TG_OP = 'INSERT' THEN
		INSERT INTO batch_counts AS c (batch_id, shard, queued, running, done, failed, cancelled, first_started_at, last_finished_at)
		SELECT d.batch_id, pg_backend_pid() % 16,
			coalesce(sum(d.n) FILTER (WHERE d.status = 'queued'), 0),
			coalesce(sum(d.n) FILTER (WHERE d.status = 'running'), 0),
			coalesce(sum(d.n) FILTER (WHERE d.status = 'done'), 0),
			coalesce(sum(d.n) FILTER (WHERE d.status = 'failed'), 0),
			coalesce(sum(d.n) FILTER (WHERE d.status = 'cancelled'), 0),
			min(d.started_at), max(d.finished_at)
		FROM (SELECT batch_id, status, 1 AS n, started_at, finished_at FROM new_rows WHERE batch_id IS NOT NULL) d
		WHERE EXISTS (SELECT 1 FROM batches b WHERE b.id = d.batch_id)
		GROUP BY d.batch_id ORDER BY d.batch_id
		ON CONFLICT (batch_id, shard) DO UPDATE SET
			queued = c.queued + excluded.queued,
			running = c.running + excluded.running,
			done = c.done + excluded.done,
			failed = c.failed + excluded.failed,
			cancelled = c.cancelled + excluded.cancelled,
			first_started_at = least(c.first_started_at, excluded.first_started_at),
			last_finished_at = greatest(c.last_finished_at, excluded.last_finished_at);
	ELSIF TG_OP = 'UPDATE' THEN
		INSERT INTO batch_counts AS c (batch_id, shard, queued, running, done, failed, cancelled, first_started_at, last_finished_at)
		SELECT d.batch_id, pg_backend_pid() % 16,
			coalesce(sum(d.n) FILTER (WHERE d.status = 'queued'), 0),
			coalesce(sum(d.n) FILTER (WHERE d.status = 'running'), 0),
			coalesce(sum(d.n) FILTER (WHERE d.status = 'done'), 0),
			coalesce(sum(d.n) FILTER (WHERE d.status = 'failed'), 0),
			coalesce(sum(d.n) FILTER (WHERE d.status = 'cancelled'), 0),
			min(d.started_at), max(d.finished_at)
		FROM (SELECT o.batch_id, o.status, -1 AS n, NULL::bigint AS started_at, NULL::bigint AS finished_at
			FROM old_rows o JOIN new_rows w ON w.id = o.id
			WHERE o.batch_id IS NOT NULL AND (o.status, o.batch_id, o.started_at, o.finished_at)
				IS DISTINCT FROM (w.status, w.batch_id, w.started_at, w.finished_at)
			UNION ALL
			SELECT w.batch_id, w.status, 1, w.started_at, w.finished_at
			FROM old_rows o JOIN new_rows w ON w.id = o.id
			WHERE w.batch_id IS NOT NULL AND (o.status, o.batch_id, o.started_at, o.finished_at)
				IS DISTINCT FROM (w.status, w.batch_id, w.started_at, w.finished_at)) d
		WHERE EXISTS (SELECT 1 FROM batches b WHERE b.id = d.batch_id)
		GROUP BY d.batch_id ORDER BY d.batch_id
		ON CONFLICT (batch_id, shard) DO UPDATE SET
			queued = c.queued + excluded.queued,
			running = c.running + excluded.running,
			done = c.done + excluded.done,
			failed = c.failed + excluded.failed,
			cancelled = c.cancelled + excluded.cancelled,
			first_started_at = least(c.first_started_at, excluded.first_started_at),
			last_finished_at = greatest(c.last_finished_at, excluded.last_finished_at);
	ELSE
		INSERT INTO batch_counts AS c (batch_id, shard, queued, running, done, failed, cancelled, first_started_at, last_finished_at)
		SELECT d.batch_id, pg_backend_pid() % 16,
			coalesce(sum(d.n) FILTER (WHERE d.status = 'queued'), 0),
			coalesce(sum(d.n) FILTER (WHERE d.status = 'running'), 0),
			coalesce(sum(d.n) FILTER (WHERE d.status = 'done'), 0),
			coalesce(sum(d.n) FILTER (WHERE d.status = 'failed'), 0),
			coalesce(sum(d.n) FILTER (WHERE d.status = 'cancelled'), 0),
			min(d.started_at), max(d.finished_at)
		FROM (SELECT batch_id, status, -1 AS n, NULL::bigint AS started_at, NULL::bigint AS finished_at FROM old_rows WHERE batch_id IS NOT NULL) d
		WHERE EXISTS (SELECT 1 FROM batches b WHERE b.id = d.batch_id)
		GROUP BY d.batch_id ORDER BY d.batch_id
		ON CONFLICT (batch_id, shard) DO UPDATE SET
			queued = c.queued + excluded.queued,
			running = c.running + excluded.running,
			done = c.done + excluded.done,
			failed = c.failed + excluded.failed,
			cancelled = c.cancelled + excluded.cancelled,
			first_started_at = least(c.first_started_at, excluded.first_started_at),
			last_finished_at = greatest(c.last_finished_at, excluded.last_finished_at);
	END IF;
	RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER "batch_counts_insert" AFTER INSERT ON "jobs"
	REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "batch_counts_change"();
--> statement-breakpoint
CREATE TRIGGER "batch_counts_update" AFTER UPDATE ON "jobs"
	REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "batch_counts_change"();
--> statement-breakpoint
CREATE TRIGGER "batch_counts_delete" AFTER DELETE ON "jobs"
	REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION "batch_counts_change"();
--> statement-breakpoint
CREATE FUNCTION "batch_counts_batch_delete"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	DELETE FROM batch_counts c USING old_rows o WHERE c.batch_id = o.id;
	RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER "batch_counts_batch_delete" AFTER DELETE ON "batches"
	REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION "batch_counts_batch_delete"();
