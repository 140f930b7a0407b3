CREATE TABLE "batch_suites" (
	"batch_id" text PRIMARY KEY NOT NULL,
	"tasks" text NOT NULL
);
--> statement-breakpoint
ALTER TABLE "batch_suites" ADD CONSTRAINT "batch_suites_batch_id_batches_id_fk" FOREIGN KEY ("batch_id") REFERENCES "public"."batches"("id") ON DELETE cascade ON UPDATE no action;