CREATE TABLE "schedule_firings" (
	"schedule_id" text NOT NULL,
	"slot_at" timestamp with time zone NOT NULL,
	"node" text NOT NULL,
	"claimed_at" timestamp with time zone NOT NULL,
	"late_ms" integer NOT NULL,
	"status" text NOT NULL,
	"reason" text,
	"run_id" text,
	"manual" boolean DEFAULT false NOT NULL,
	CONSTRAINT "schedule_firings_schedule_id_slot_at_pk" PRIMARY KEY("schedule_id","slot_at")
);
--> statement-breakpoint
CREATE TABLE "schedules" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"cron" text,
	"run_at" timestamp with time zone,
	"timezone" text NOT NULL,
	"until" timestamp with time zone,
	"overlap" text NOT NULL,
	"command" text NOT NULL,
	"target" jsonb NOT NULL,
	"owner_id" text NOT NULL,
	"state" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "schedule_firings" ADD CONSTRAINT "schedule_firings_schedule_id_schedules_id_fk" FOREIGN KEY ("schedule_id") REFERENCES "public"."schedules"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "schedules_state" ON "schedules" USING btree ("state");