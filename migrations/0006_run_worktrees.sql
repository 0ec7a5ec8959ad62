ALTER TABLE "runs" ADD COLUMN "branch" text;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "source_root" text;