CREATE TABLE "job_progress" (
	"job_id" bigint PRIMARY KEY NOT NULL,
	"attempt" integer NOT NULL,
	"progress" text NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "job_progress" ADD CONSTRAINT "job_progress_job_id_jobs_id_fk" FOREIGN KEY ("job_id") REFERENCES "public"."jobs"("id") ON DELETE cascade ON UPDATE no action;