CREATE TABLE "plan_windows" (
	"node" text NOT NULL,
	"vendor" "vendor" NOT NULL,
	"window" text NOT NULL,
	"used_percent" double precision NOT NULL,
	"resets_at" timestamp with time zone,
	"reported_at" timestamp with time zone NOT NULL,
	"warned_reset_at" timestamp with time zone,
	CONSTRAINT "plan_windows_node_vendor_window_pk" PRIMARY KEY("node","vendor","window")
);
--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "quota_resets_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "not_before" timestamp with time zone;--> statement-breakpoint
CREATE INDEX "runs_quota_exhausted" ON "runs" USING btree ("vendor","ended_at") WHERE "runs"."reason" = 'quota_exhausted';