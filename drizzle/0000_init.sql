CREATE TABLE `batches` (
	`id` text PRIMARY KEY NOT NULL,
	`idempotency_key` text,
	`request_hash` text NOT NULL,
	`label` text,
	`total` integer NOT NULL,
	`created_at` integer NOT NULL,
	CONSTRAINT "batches_total_nonnegative" CHECK("batches"."total" >= 0)
);
--> statement-breakpoint
CREATE UNIQUE INDEX `batches_idempotency_key` ON `batches` (`idempotency_key`);--> statement-breakpoint
CREATE INDEX `batches_created` ON `batches` (`created_at`);--> statement-breakpoint
CREATE TABLE `jobs` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`batch_id` text,
	`parent_id` integer,
	`kind` text NOT NULL,
	`status` text DEFAULT 'queued' NOT NULL,
	`priority` integer DEFAULT 0 NOT NULL,
	`payload` text NOT NULL,
	`idempotency_key` text,
	`attempt` integer DEFAULT 0 NOT NULL,
	`max_attempts` integer DEFAULT 3 NOT NULL,
	`run_at` integer NOT NULL,
	`lease_owner` text,
	`lease_expires_at` integer,
	`heartbeat_at` integer,
	`cancel_requested_at` integer,
	`result` text,
	`last_error` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`started_at` integer,
	`finished_at` integer,
	FOREIGN KEY (`batch_id`) REFERENCES `batches`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`parent_id`) REFERENCES `jobs`(`id`) ON UPDATE no action ON DELETE set null,
	CONSTRAINT "jobs_kind_known" CHECK("kind" IN ('baseline', 'solve', 'grade', 'noop')),
	CONSTRAINT "jobs_status_known" CHECK("status" IN ('queued', 'running', 'done', 'failed', 'cancelled')),
	CONSTRAINT "jobs_attempt_bounds" CHECK("jobs"."attempt" >= 0 AND "jobs"."max_attempts" >= 1),
	CONSTRAINT "jobs_lease_iff_running" CHECK(("jobs"."status" = 'running') = ("jobs"."lease_owner" IS NOT NULL AND "jobs"."lease_expires_at" IS NOT NULL)),
	CONSTRAINT "jobs_finished_has_time" CHECK(("status" IN ('done', 'failed', 'cancelled')) = ("finished_at" IS NOT NULL))
);
--> statement-breakpoint
CREATE INDEX `jobs_claim` ON `jobs` (`kind`,"priority" DESC,`run_at`,`id`) WHERE "jobs"."status" = 'queued';--> statement-breakpoint
CREATE INDEX `jobs_lease` ON `jobs` (`lease_expires_at`) WHERE "jobs"."status" = 'running';--> statement-breakpoint
CREATE INDEX `jobs_batch_status` ON `jobs` (`batch_id`,`status`);--> statement-breakpoint
CREATE INDEX `jobs_status_id` ON `jobs` (`status`,`id`);--> statement-breakpoint
CREATE INDEX `jobs_parent` ON `jobs` (`parent_id`) WHERE "jobs"."parent_id" IS NOT NULL;--> statement-breakpoint
CREATE INDEX `jobs_finished` ON `jobs` (`finished_at`) WHERE "jobs"."finished_at" IS NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX `jobs_idempotency_key` ON `jobs` (`idempotency_key`) WHERE "jobs"."idempotency_key" IS NOT NULL;