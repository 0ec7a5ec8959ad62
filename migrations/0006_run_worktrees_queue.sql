ALTER TYPE "public"."run_status" ADD VALUE 'queued';--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "branch" text;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "source_root" text;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "launch" jsonb;