CREATE TABLE "test_statuses" (
	"job_id" bigint PRIMARY KEY NOT NULL,
	"tests" text NOT NULL
);
--> statement-breakpoint
ALTER TABLE "test_statuses" ADD CONSTRAINT "test_statuses_job_id_jobs_id_fk" FOREIGN KEY ("job_id") REFERENCES "public"."jobs"("id") ON DELETE cascade ON UPDATE no action;