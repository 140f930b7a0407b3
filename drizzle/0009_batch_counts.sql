-- Custom SQL migration file, put your code below! ---- Batch counts kept by triggers, so that a batch's progress is read from one row instead of
-- counted over its jobs on every read (issue 13 §6: a 100,000-job batch reports in <= 2 s).
-- Not in src/queue/schema.ts: drizzle never reads or writes this table; batchProgress reads it
-- with its own statement. A table rebuild of `jobs` drops these triggers: a later migration
-- that rebuilds `jobs` must come before this one (or create them again).
CREATE TABLE `batch_counts` (
	`batch_id` text PRIMARY KEY NOT NULL,
	`queued` integer DEFAULT 0 NOT NULL,
	`running` integer DEFAULT 0 NOT NULL,
	`done` integer DEFAULT 0 NOT NULL,
	`failed` integer DEFAULT 0 NOT NULL,
	`cancelled` integer DEFAULT 0 NOT NULL,
	`first_started_at` integer,
	`last_finished_at` integer
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `batch_counts` (`batch_id`, `queued`, `running`, `done`, `failed`, `cancelled`, `first_started_at`, `last_finished_at`)
SELECT `batch_id`, sum(`status` = 'queued'), sum(`status` = 'running'), sum(`status` = 'done'), sum(`status` = 'failed'), sum(`status` = 'cancelled'), min(`started_at`), max(`finished_at`)
FROM `jobs` WHERE `batch_id` IS NOT NULL GROUP BY `batch_id`;
--> statement-breakpoint
CREATE TRIGGER `batch_counts_insert` AFTER INSERT ON `jobs` WHEN NEW.`batch_id` IS NOT NULL
BEGIN
	INSERT INTO `batch_counts` (`batch_id`, `queued`, `running`, `done`, `failed`, `cancelled`, `first_started_at`, `last_finished_at`)
	VALUES (NEW.`batch_id`, NEW.`status` = 'queued', NEW.`status` = 'running', NEW.`status` = 'done', NEW.`status` = 'failed', NEW.`status` = 'cancelled', NEW.`started_at`, NEW.`finished_at`)
	ON CONFLICT (`batch_id`) DO UPDATE SET
		`queued` = `queued` + excluded.`queued`,
		`running` = `running` + excluded.`running`,
		`done` = `done` + excluded.`done`,
		`failed` = `failed` + excluded.`failed`,
		`cancelled` = `cancelled` + excluded.`cancelled`,
		`first_started_at` = coalesce(min(`first_started_at`, excluded.`first_started_at`), `first_started_at`, excluded.`first_started_at`),
		`last_finished_at` = coalesce(max(`last_finished_at`, excluded.`last_finished_at`), `last_finished_at`, excluded.`last_finished_at`);
END;
--> statement-breakpoint
CREATE TRIGGER `batch_counts_update` AFTER UPDATE OF `status`, `batch_id`, `started_at`, `finished_at` ON `jobs`
WHEN OLD.`batch_id` IS NOT NULL OR NEW.`batch_id` IS NOT NULL
BEGIN
	UPDATE `batch_counts` SET
		`queued` = `queued` - (OLD.`status` = 'queued'),
		`running` = `running` - (OLD.`status` = 'running'),
		`done` = `done` - (OLD.`status` = 'done'),
		`failed` = `failed` - (OLD.`status` = 'failed'),
		`cancelled` = `cancelled` - (OLD.`status` = 'cancelled')
	WHERE `batch_id` = OLD.`batch_id`;
	INSERT INTO `batch_counts` (`batch_id`, `queued`, `running`, `done`, `failed`, `cancelled`, `first_started_at`, `last_finished_at`)
	SELECT NEW.`batch_id`, NEW.`status` = 'queued', NEW.`status` = 'running', NEW.`status` = 'done', NEW.`status` = 'failed', NEW.`status` = 'cancelled', NEW.`started_at`, NEW.`finished_at`
	WHERE NEW.`batch_id` IS NOT NULL
	ON CONFLICT (`batch_id`) DO UPDATE SET
		`queued` = `queued` + excluded.`queued`,
		`running` = `running` + excluded.`running`,
		`done` = `done` + excluded.`done`,
		`failed` = `failed` + excluded.`failed`,
		`cancelled` = `cancelled` + excluded.`cancelled`,
		`first_started_at` = coalesce(min(`first_started_at`, excluded.`first_started_at`), `first_started_at`, excluded.`first_started_at`),
		`last_finished_at` = coalesce(max(`last_finished_at`, excluded.`last_finished_at`), `last_finished_at`, excluded.`last_finished_at`);
END;
--> statement-breakpoint
CREATE TRIGGER `batch_counts_delete` AFTER DELETE ON `jobs` WHEN OLD.`batch_id` IS NOT NULL
BEGIN
	UPDATE `batch_counts` SET
		`queued` = `queued` - (OLD.`status` = 'queued'),
		`running` = `running` - (OLD.`status` = 'running'),
		`done` = `done` - (OLD.`status` = 'done'),
		`failed` = `failed` - (OLD.`status` = 'failed'),
		`cancelled` = `cancelled` - (OLD.`status` = 'cancelled')
	WHERE `batch_id` = OLD.`batch_id`;
END;
--> statement-breakpoint
CREATE TRIGGER `batch_counts_batch_delete` AFTER DELETE ON `batches`
BEGIN
	DELETE FROM `batch_counts` WHERE `batch_id` = OLD.`id`;
END;
