CREATE TABLE `batch_suites` (
	`batch_id` text PRIMARY KEY NOT NULL,
	`tasks` text NOT NULL,
	FOREIGN KEY (`batch_id`) REFERENCES `batches`(`id`) ON UPDATE no action ON DELETE cascade
);
