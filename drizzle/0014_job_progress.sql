CREATE TABLE `job_progress` (
	`job_id` integer PRIMARY KEY NOT NULL,
	`attempt` integer NOT NULL,
	`progress` text NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`job_id`) REFERENCES `jobs`(`id`) ON UPDATE no action ON DELETE cascade
);
