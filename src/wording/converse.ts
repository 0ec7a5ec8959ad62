/** The sentences of a conversation with an agent: `/new`, and plain messages read as its next turn. */

/** `/new`: the conversation's next plain message starts a new session. */
export const NEW_SESSION_TEXT =
  'New conversation: your next message starts a fresh run (earlier runs stay resumable by a reply).';

/** `/new` where plain messages are read as commands only (`[chat] plain_messages = "commands"`). */
export const NEW_SESSION_COMMANDS_TEXT =
  'New conversation noted. Plain messages are not read as tasks here ([chat] plain_messages = "commands"): start a run with /run TASK.';
