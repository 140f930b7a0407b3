PRAGMA foreign_keys=OFF;--> statement-breakpoint
CREATE TABLE `__new_batches` (
	`id` text PRIMARY KEY NOT NULL,
	`idempotency_key` text,
	`request_hash` text NOT NULL,
	`label` text,
	`total` integer NOT NULL,
	`spent_usd` real DEFAULT 0 NOT NULL,
	`created_at` integer NOT NULL,
	CONSTRAINT "batches_total_nonnegative" CHECK("__new_batches"."total" >= 0),
	CONSTRAINT "batches_spent_nonnegative" CHECK("__new_batches"."spent_usd" >= 0)
);
--> statement-breakpoint
INSERT INTO `__new_batches`("id", "idempotency_key", "request_hash", "label", "total", "spent_usd", "created_at") SELECT "id", "idempotency_key", "request_hash", "label", "total", "spent_usd", "created_at" FROM `batches`;--> statement-breakpoint
DROP TABLE `batches`;--> statement-breakpoint
ALTER TABLE `__new_batches` RENAME TO `batches`;--> statement-breakpoint
PRAGMA foreign_keys=ON;--> statement-breakpoint
CREATE UNIQUE INDEX `batches_idempotency_key` ON `batches` (`idempotency_key`);--> statement-breakpoint
CREATE INDEX `batches_created` ON `batches` (`created_at`);