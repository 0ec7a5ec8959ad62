ALTER TABLE "runs" ADD COLUMN "quota_resets_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "not_before" timestamp with time zone;--> statement-breakpoint
CREATE INDEX "runs_quota_exhausted" ON "runs" USING btree ("vendor","ended_at") WHERE "runs"."reason" = 'quota_exhausted';