CREATE TYPE "public"."inbound_state" AS ENUM('received', 'claimed', 'handled');--> statement-breakpoint
ALTER TABLE "deliveries" ADD COLUMN "reshapes" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "inbound_events" ADD COLUMN "state" "inbound_state" DEFAULT 'handled' NOT NULL;--> statement-breakpoint
ALTER TABLE "inbound_events" ADD COLUMN "claimed_by" text;--> statement-breakpoint
ALTER TABLE "inbound_events" ADD COLUMN "payload" json;--> statement-breakpoint
CREATE INDEX "inbound_events_open" ON "inbound_events" USING btree ("platform") WHERE "inbound_events"."state" <> 'handled';