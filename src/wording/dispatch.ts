/** The dispatcher's own answers: refusals of a message before any command runs, and of a cancel. */

/** The answer to a message holding U+0000, which PostgreSQL cannot store in text. */
export const UNSTORABLE_TEXT =
  'Your message contains a NUL character (U+0000), which baton cannot store. Remove it and send the message again.';

/** The answer to a command that was forwarded from someone else. */
export const FORWARDED_REFUSAL =
  'That is a forwarded message: somebody else’s words are never run as your command. To run it, send the command yourself.';

/** The answer to a command baton does not know (and to a launch where coding agents are disabled). */
export const UNKNOWN_COMMAND = 'Unknown command. Send /help for the commands.';

/** The answer for a cancel whose run end has not reached the database yet. */
export const UNRECORDED =
  'its processes are stopped, but the database is not answering, so the cancel is not recorded yet. baton keeps retrying; the outcome follows once it is written.';

/** The answer to a command or button where coding agents are switched off. */
export const AGENTS_DISABLED = 'Coding agents are disabled on this machine.';
