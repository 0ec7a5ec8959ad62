ALTER TABLE "runs" ADD COLUMN "verify_reason" text;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "verification" jsonb;