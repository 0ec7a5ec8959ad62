/**
 * The commands a chat client offers in its command menu (Telegram `setMyCommands`, Bot API
 * BotCommand: 1-32 characters of a-z, 0-9 and `_`, a description of 1-256 characters). The same
 * grammar as the dispatcher's `parseCommand`; the full help is `/help`.
 */

/** One entry of the menu. */
export interface MenuCommand {
  /** The command without its slash, e.g. `codex`. */
  command: string;
  description: string;
}

/** baton's commands, in the order the menu lists them. */
export const COMMAND_MENU: readonly MenuCommand[] = [
  { command: 'codex', description: 'Run Codex on a task: /codex [in:ALIAS] TASK' },
  { command: 'claude', description: 'Run Claude Code on a task: /claude [in:ALIAS] TASK' },
  { command: 'run', description: 'Run the default agent on a task' },
  { command: 'runs', description: 'Recent runs, or one run: /runs RUN_ID' },
  { command: 'stop', description: 'Stop every active run' },
  { command: 'new', description: 'Start a new conversation: the next message runs afresh' },
  { command: 'cancel', description: 'Cancel one run: /cancel RUN_ID' },
  { command: 'use', description: 'Set this conversation’s default project: /use ALIAS' },
  { command: 'redeliver', description: 'Send a dead letter again: /redeliver ID' },
  { command: 'doctor', description: 'The health of this baton (owner only)' },
  { command: 'whoami', description: 'Your user id and this chat’s id' },
  { command: 'help', description: 'What baton understands' },
];
