CREATE TABLE `test_statuses` (
	`job_id` integer PRIMARY KEY NOT NULL,
	`tests` text NOT NULL,
	FOREIGN KEY (`job_id`) REFERENCES `jobs`(`id`) ON UPDATE no action ON DELETE cascade
);
