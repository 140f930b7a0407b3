ALTER TABLE "jobs" ADD COLUMN "outcome" text;--> statement-breakpoint
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_outcome_known" CHECK ("outcome" IS NULL OR "outcome" IN ('resolved', 'unresolved', 'error', 'invalid_task'));--> statement-breakpoint
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_outcome_when_finished" CHECK ("jobs"."outcome" IS NULL OR "jobs"."status" IN ('done', 'failed'));