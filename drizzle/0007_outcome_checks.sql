PRAGMA foreign_keys=OFF;--> statement-breakpoint
CREATE TABLE `__new_jobs` (
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
	`error_code` text,
	`outcome` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`started_at` integer,
	`finished_at` integer,
	FOREIGN KEY (`batch_id`) REFERENCES `batches`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`parent_id`) REFERENCES `jobs`(`id`) ON UPDATE no action ON DELETE set null,
	CONSTRAINT "jobs_kind_known" CHECK("kind" IN ('baseline', 'solve', 'grade', 'validate', 'noop')),
	CONSTRAINT "jobs_status_known" CHECK("status" IN ('queued', 'running', 'done', 'failed', 'cancelled')),
	CONSTRAINT "jobs_attempt_bounds" CHECK("__new_jobs"."attempt" >= 0 AND "__new_jobs"."max_attempts" >= 1),
	CONSTRAINT "jobs_lease_iff_running" CHECK(("__new_jobs"."status" = 'running') = ("__new_jobs"."lease_owner" IS NOT NULL AND "__new_jobs"."lease_expires_at" IS NOT NULL)),
	CONSTRAINT "jobs_outcome_known" CHECK("outcome" IS NULL OR "outcome" IN ('resolved', 'unresolved', 'error', 'invalid_task')),
	CONSTRAINT "jobs_outcome_when_finished" CHECK("__new_jobs"."outcome" IS NULL OR "__new_jobs"."status" IN ('done', 'failed')),
	CONSTRAINT "jobs_finished_has_time" CHECK(("status" IN ('done', 'failed', 'cancelled')) = ("finished_at" IS NOT NULL))
);
--> statement-breakpoint
INSERT INTO `__new_jobs`("id", "batch_id", "parent_id", "kind", "status", "priority", "payload", "idempotency_key", "attempt", "max_attempts", "run_at", "lease_owner", "lease_expires_at", "heartbeat_at", "cancel_requested_at", "result", "last_error", "error_code", "outcome", "created_at", "updated_at", "started_at", "finished_at") SELECT "id", "batch_id", "parent_id", "kind", "status", "priority", "payload", "idempotency_key", "attempt", "max_attempts", "run_at", "lease_owner", "lease_expires_at", "heartbeat_at", "cancel_requested_at", "result", "last_error", "error_code", "outcome", "created_at", "updated_at", "started_at", "finished_at" FROM `jobs`;--> statement-breakpoint
DROP TABLE `jobs`;--> statement-breakpoint
ALTER TABLE `__new_jobs` RENAME TO `jobs`;--> statement-breakpoint
PRAGMA foreign_keys=ON;--> statement-breakpoint
CREATE INDEX `jobs_lease` ON `jobs` (`lease_expires_at`) WHERE "jobs"."status" = 'running';--> statement-breakpoint
CREATE INDEX `jobs_batch_status` ON `jobs` (`batch_id`,`status`);--> statement-breakpoint
CREATE INDEX `jobs_status_id` ON `jobs` (`status`,`id`);--> statement-breakpoint
CREATE INDEX `jobs_parent` ON `jobs` (`parent_id`) WHERE "jobs"."parent_id" IS NOT NULL;--> statement-breakpoint
CREATE INDEX `jobs_finished` ON `jobs` (`finished_at`) WHERE "jobs"."finished_at" IS NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX `jobs_idempotency_key` ON `jobs` (`idempotency_key`) WHERE "jobs"."idempotency_key" IS NOT NULL;