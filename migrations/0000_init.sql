CREATE TYPE "public"."delivery_status" AS ENUM('pending', 'delivered', 'dead');--> statement-breakpoint
CREATE TYPE "public"."run_status" AS ENUM('starting', 'running', 'completed', 'failed', 'blocked', 'cancelled', 'interrupted');--> statement-breakpoint
CREATE TYPE "public"."vendor" AS ENUM('codex', 'claude');--> statement-breakpoint
CREATE TABLE "deliveries" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"run_id" text,
	"kind" text NOT NULL,
	"target" jsonb NOT NULL,
	"body" text NOT NULL,
	"status" "delivery_status" DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"parts_delivered" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp with time zone NOT NULL,
	"last_error" text,
	"platform_message_ids" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"delivered_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "inbound_events" (
	"platform" text NOT NULL,
	"dedupe_key" text NOT NULL,
	"received_at" timestamp with time zone NOT NULL,
	CONSTRAINT "inbound_events_platform_dedupe_key_pk" PRIMARY KEY("platform","dedupe_key")
);
--> statement-breakpoint
CREATE TABLE "run_messages" (
	"platform" text NOT NULL,
	"chat_id" text NOT NULL,
	"message_id" text NOT NULL,
	"run_id" text NOT NULL,
	CONSTRAINT "run_messages_platform_chat_id_message_id_pk" PRIMARY KEY("platform","chat_id","message_id")
);
--> statement-breakpoint
CREATE TABLE "runs" (
	"id" text PRIMARY KEY NOT NULL,
	"parent_run_id" text,
	"vendor" "vendor" NOT NULL,
	"status" "run_status" NOT NULL,
	"reason" text,
	"task" text NOT NULL,
	"cwd" text NOT NULL,
	"worktree_root" text NOT NULL,
	"options" jsonb NOT NULL,
	"origin" jsonb NOT NULL,
	"vendor_session_id" text,
	"final_message" text,
	"error_message" text,
	"usage" jsonb,
	"exit_code" integer,
	"exit_signal" text,
	"pid" integer,
	"supervisor" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"started_at" timestamp with time zone,
	"ended_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "deliveries" ADD CONSTRAINT "deliveries_run_id_runs_id_fk" FOREIGN KEY ("run_id") REFERENCES "public"."runs"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "run_messages" ADD CONSTRAINT "run_messages_run_id_runs_id_fk" FOREIGN KEY ("run_id") REFERENCES "public"."runs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "deliveries_due" ON "deliveries" USING btree ("next_attempt_at") WHERE "deliveries"."status" = 'pending';--> statement-breakpoint
CREATE INDEX "deliveries_run" ON "deliveries" USING btree ("run_id");--> statement-breakpoint
CREATE UNIQUE INDEX "runs_one_active_per_worktree" ON "runs" USING btree ("worktree_root") WHERE "runs"."status" in ('starting', 'running');--> statement-breakpoint
CREATE INDEX "runs_created_at" ON "runs" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "runs_active" ON "runs" USING btree ("status") WHERE "runs"."status" in ('starting', 'running');