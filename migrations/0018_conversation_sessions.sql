CREATE TABLE "conversation_sessions" (
	"platform" text NOT NULL,
	"chat_id" text NOT NULL,
	"thread_id" text DEFAULT '' NOT NULL,
	"fresh_since" timestamp with time zone NOT NULL,
	CONSTRAINT "conversation_sessions_platform_chat_id_thread_id_pk" PRIMARY KEY("platform","chat_id","thread_id")
);
