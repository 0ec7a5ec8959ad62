CREATE TYPE "public"."body_format" AS ENUM('plain', 'markdown');--> statement-breakpoint
ALTER TABLE "deliveries" ADD COLUMN "format" "body_format" DEFAULT 'plain' NOT NULL;