CREATE TABLE "conversation_defaults" (
	"platform" text NOT NULL,
	"chat_id" text NOT NULL,
	"thread_id" text DEFAULT '' NOT NULL,
	"cwd" text NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "conversation_defaults_platform_chat_id_thread_id_pk" PRIMARY KEY("platform","chat_id","thread_id")
);
