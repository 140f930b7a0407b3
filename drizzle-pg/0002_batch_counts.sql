-- Custom SQL migration file, put your code below! --
-- Batch counts kept by triggers, as on SQLite (drizzle/0009_batch_counts.sql), so that a
-- batch's progress is read from one row instead of counted over its jobs on every read. Not in
-- src/queue/pg/schema.ts: drizzle never reads or writes this table; batchProgress reads it
-- with its own statement. The triggers are per statement, over transition tables: one write
-- per batch a statement touched (a claim of 8 jobs of one batch is one row update), rows are
-- locked in batch order, and an update that changes no count or time (a heartbeat) writes
-- nothing, so heartbeats never wait on a batch's row.
CREATE TABLE "batch_counts" (
	"batch_id" text PRIMARY KEY NOT NULL,
	"queued" integer DEFAULT 0 NOT NULL,
	"running" integer DEFAULT 0 NOT NULL,
	"done" integer DEFAULT 0 NOT NULL,
	"failed" integer DEFAULT 0 NOT NULL,
	"cancelled" integer DEFAULT 0 NOT NULL,
	"first_started_at" bigint,
	"last_finished_at" bigint
);
--> statement-breakpoint
INSERT INTO "batch_counts" ("batch_id", "queued", "running", "done", "failed", "cancelled", "first_started_at", "last_finished_at")
SELECT "batch_id", count(*) FILTER (WHERE "status" = 'queued'), count(*) FILTER (WHERE "status" = 'running'), count(*) FILTER (WHERE "status" = 'done'), count(*) FILTER (WHERE "status" = 'failed'), count(*) FILTER (WHERE "status" = 'cancelled'), min("started_at"), max("finished_at")
FROM "jobs" WHERE "batch_id" IS NOT NULL GROUP BY "batch_id";
--> statement-breakpoint
-- Each branch names only the transition tables its event has.
CREATE FUNCTION "batch_counts_apply"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF TG_OP = 'INSERT' THEN
		INSERT INTO "batch_counts" AS b ("batch_id", "queued", "running", "done", "failed", "cancelled", "first_started_at", "last_finished_at")
		SELECT "batch_id", count(*) FILTER (WHERE "status" = 'queued'), count(*) FILTER (WHERE "status" = 'running'), count(*) FILTER (WHERE "status" = 'done'), count(*) FILTER (WHERE "status" = 'failed'), count(*) FILTER (WHERE "status" = 'cancelled'), min("started_at"), max("finished_at")
		FROM new_rows WHERE "batch_id" IS NOT NULL GROUP BY "batch_id" ORDER BY "batch_id"
		ON CONFLICT ("batch_id") DO UPDATE SET
		"queued" = b."queued" + excluded."queued",
		"running" = b."running" + excluded."running",
		"done" = b."done" + excluded."done",
		"failed" = b."failed" + excluded."failed",
		"cancelled" = b."cancelled" + excluded."cancelled",
		"first_started_at" = least(b."first_started_at", excluded."first_started_at"),
		"last_finished_at" = greatest(b."last_finished_at", excluded."last_finished_at");
	ELSIF TG_OP = 'UPDATE' THEN
		-- The new state of each row whose counts or times changed, less its old state.
		INSERT INTO "batch_counts" AS b ("batch_id", "queued", "running", "done", "failed", "cancelled", "first_started_at", "last_finished_at")
		SELECT "batch_id", sum(q), sum(r), sum(dn), sum(f), sum(c), min(s), max(e)
		FROM (
			SELECT n."batch_id", (n."status" = 'queued')::int AS q, (n."status" = 'running')::int AS r, (n."status" = 'done')::int AS dn, (n."status" = 'failed')::int AS f, (n."status" = 'cancelled')::int AS c, n."started_at" AS s, n."finished_at" AS e
			FROM new_rows n JOIN old_rows o ON o."id" = n."id"
			WHERE n."batch_id" IS NOT NULL AND (o."status" IS DISTINCT FROM n."status" OR o."batch_id" IS DISTINCT FROM n."batch_id" OR o."started_at" IS DISTINCT FROM n."started_at" OR o."finished_at" IS DISTINCT FROM n."finished_at")
			UNION ALL
			SELECT o."batch_id", -(o."status" = 'queued')::int, -(o."status" = 'running')::int, -(o."status" = 'done')::int, -(o."status" = 'failed')::int, -(o."status" = 'cancelled')::int, NULL, NULL
			FROM old_rows o JOIN new_rows n ON n."id" = o."id"
			WHERE o."batch_id" IS NOT NULL AND (o."status" IS DISTINCT FROM n."status" OR o."batch_id" IS DISTINCT FROM n."batch_id" OR o."started_at" IS DISTINCT FROM n."started_at" OR o."finished_at" IS DISTINCT FROM n."finished_at")
		) delta
		GROUP BY "batch_id" ORDER BY "batch_id"
		ON CONFLICT ("batch_id") DO UPDATE SET
		"queued" = b."queued" + excluded."queued",
		"running" = b."running" + excluded."running",
		"done" = b."done" + excluded."done",
		"failed" = b."failed" + excluded."failed",
		"cancelled" = b."cancelled" + excluded."cancelled",
		"first_started_at" = least(b."first_started_at", excluded."first_started_at"),
		"last_finished_at" = greatest(b."last_finished_at", excluded."last_finished_at");
	ELSE
		WITH d AS (
			SELECT "batch_id", count(*) FILTER (WHERE "status" = 'queued') AS q, count(*) FILTER (WHERE "status" = 'running') AS r, count(*) FILTER (WHERE "status" = 'done') AS dn, count(*) FILTER (WHERE "status" = 'failed') AS f, count(*) FILTER (WHERE "status" = 'cancelled') AS c
			FROM old_rows WHERE "batch_id" IS NOT NULL GROUP BY "batch_id"),
		l AS (SELECT b."batch_id" FROM "batch_counts" b JOIN d USING ("batch_id") ORDER BY b."batch_id" FOR UPDATE OF b)
		UPDATE "batch_counts" b SET "queued" = b."queued" - d.q, "running" = b."running" - d.r, "done" = b."done" - d.dn, "failed" = b."failed" - d.f, "cancelled" = b."cancelled" - d.c
		FROM d JOIN l USING ("batch_id") WHERE b."batch_id" = d."batch_id";
	END IF;
	RETURN NULL;
END;
$$;
--> statement-breakpoint
CREATE TRIGGER "batch_counts_insert" AFTER INSERT ON "jobs" REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "batch_counts_apply"();
--> statement-breakpoint
CREATE TRIGGER "batch_counts_update" AFTER UPDATE ON "jobs" REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION "batch_counts_apply"();
--> statement-breakpoint
CREATE TRIGGER "batch_counts_delete" AFTER DELETE ON "jobs" REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION "batch_counts_apply"();
--> statement-breakpoint
CREATE FUNCTION "batch_counts_batch_delete"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	DELETE FROM "batch_counts" b USING old_batches o WHERE b."batch_id" = o."id";
	RETURN NULL;
END;
$$;
--> statement-breakpoint
CREATE TRIGGER "batch_counts_batch_delete" AFTER DELETE ON "batches" REFERENCING OLD TABLE AS old_batches FOR EACH STATEMENT EXECUTE FUNCTION "batch_counts_batch_delete"();
