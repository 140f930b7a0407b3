CREATE TABLE "artifact_blobs" (
	"sha256" text PRIMARY KEY NOT NULL,
	"size" integer NOT NULL,
	"bytes" "bytea" NOT NULL,
	"created_at" bigint NOT NULL,
	CONSTRAINT "artifact_blobs_sha256_hex" CHECK ("artifact_blobs"."sha256" ~ '^[0-9a-f]{64}$'),
	CONSTRAINT "artifact_blobs_size_bounded" CHECK ("size" >= 0 AND "size" <= 16777216 AND octet_length("bytes") = "size")
);
--> statement-breakpoint
CREATE INDEX "artifacts_sha256" ON "artifacts" USING btree ("sha256");