CREATE TABLE "button_presses" (
	"platform" text NOT NULL,
	"chat_id" text NOT NULL,
	"message_id" text NOT NULL,
	"action" text NOT NULL,
	"arg" text NOT NULL,
	"pressed_by" text NOT NULL,
	"pressed_at" timestamp with time zone NOT NULL,
	"answer" text,
	CONSTRAINT "button_presses_platform_chat_id_message_id_pk" PRIMARY KEY("platform","chat_id","message_id")
);
