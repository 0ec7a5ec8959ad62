CREATE TYPE "public"."approval_decision" AS ENUM('allow', 'allow_run', 'deny', 'timeout', 'run_gone');--> statement-breakpoint
ALTER TYPE "public"."run_status" ADD VALUE 'queued';--> statement-breakpoint
CREATE TABLE "approvals" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"run_id" text NOT NULL,
	"request_id" text NOT NULL,
	"tool" text NOT NULL,
	"input" jsonb NOT NULL,
	"kind" text NOT NULL,
	"requested_at" timestamp with time zone NOT NULL,
	"decided_at" timestamp with time zone,
	"decision" "approval_decision",
	"decided_by" text
);
--> statement-breakpoint
CREATE TABLE "leases" (
	"key" text PRIMARY KEY NOT NULL,
	"holder" text NOT NULL,
	"node_name" text NOT NULL,
	"acquired_at" timestamp with time zone NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "nodes" (
	"instance" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"host" text NOT NULL,
	"pid" integer NOT NULL,
	"roots" jsonb NOT NULL,
	"started_at" timestamp with time zone NOT NULL,
	"heartbeat_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "deliveries" ADD COLUMN "documents" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "deliveries" ADD COLUMN "buttons" jsonb;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "branch" text;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "source_root" text;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "launch" jsonb;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "approval_token_sha256" text;--> statement-breakpoint
ALTER TABLE "approvals" ADD CONSTRAINT "approvals_run_id_runs_id_fk" FOREIGN KEY ("run_id") REFERENCES "public"."runs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "approvals_request" ON "approvals" USING btree ("run_id","request_id");--> statement-breakpoint
CREATE INDEX "approvals_open" ON "approvals" USING btree ("run_id") WHERE "approvals"."decision" is null;