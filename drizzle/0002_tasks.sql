CREATE TABLE `tasks` (
	`task_id` text NOT NULL,
	`content_hash` text NOT NULL,
	`bundle_path` text NOT NULL,
	`validity` text NOT NULL,
	`reason` text NOT NULL,
	`detail` text NOT NULL,
	`job_id` integer,
	`checked_at` integer NOT NULL,
	PRIMARY KEY(`task_id`, `content_hash`),
	FOREIGN KEY (`job_id`) REFERENCES `jobs`(`id`) ON UPDATE no action ON DELETE set null,
	CONSTRAINT "tasks_validity" CHECK("tasks"."validity" IN ('valid', 'quarantined'))
);
--> statement-breakpoint
CREATE INDEX `tasks_checked` ON `tasks` (`checked_at`);