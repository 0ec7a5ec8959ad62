/** The sentences of a conversation with an agent: `/new`, and plain messages read as its next turn. */

/** `/new`: the conversation's next plain message starts a new session. */
export const NEW_SESSION_TEXT =
  'New conversation: your next message starts a fresh run (earlier runs stay resumable by a reply).';

/** `/new` where plain messages are read as commands only (`[chat] plain_messages = "commands"`). */
export const NEW_SESSION_COMMANDS_TEXT =
  'New conversation noted. Plain messages are not read as tasks here ([chat] plain_messages = "commands"): start a run with /run TASK.';

/** A message added to a run's running turn; `tag` is the run's `[run …]` tag. */
export function steerAddedText(tag: string): string {
  return `↪ added to ${tag}`;
}

/**
 * A message that reached no running turn: `ended` when the run's last turn had just ended,
 * `unsupported` when its CLI takes no message while it runs. Either way it becomes a resumed run.
 */
export function steerDeferredText(tag: string, why: 'ended' | 'unsupported'): string {
  return why === 'ended'
    ? `${tag} had just finished its turn: your message starts a resumed run once it has ended.`
    : `${tag} takes no message while it runs: your message starts a resumed run once it has ended.`;
}

/** A plain message in a conversation with several active runs; `tags` are their `[run …]` tags. */
export function whichRunText(tags: readonly string[]): string {
  return `${tags.length} runs are active here (${tags.join(', ')}): reply to the status message of the one your message is for.`;
}

/** A message for a run another baton process supervises, which only that process can reach. */
export function steerElsewhereText(tag: string, id: string): string {
  return `${tag} runs under another baton process, which alone can add to it. Wait for its outcome and reply to it, or /cancel ${id}.`;
}

/** A deferred message whose run was cancelled meanwhile: it is not run. */
export function steerDroppedText(tag: string): string {
  return `${tag} was cancelled, so your message to it was not run. Reply to its outcome to resume it with the message.`;
}
