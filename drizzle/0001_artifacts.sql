CREATE TABLE `artifacts` (
	`id` text PRIMARY KEY NOT NULL,
	`job_id` integer,
	`attempt` integer,
	`name` text NOT NULL,
	`media_type` text NOT NULL,
	`sha256` text NOT NULL,
	`size` integer NOT NULL,
	`rel_path` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`job_id`) REFERENCES `jobs`(`id`) ON UPDATE no action ON DELETE set null,
	CONSTRAINT "artifacts_sha256_hex" CHECK(length("artifacts"."sha256") = 64 AND "artifacts"."sha256" NOT GLOB '*[^0-9a-f]*'),
	CONSTRAINT "artifacts_size_nonnegative" CHECK("artifacts"."size" >= 0)
);
--> statement-breakpoint
CREATE INDEX `artifacts_job` ON `artifacts` (`job_id`);