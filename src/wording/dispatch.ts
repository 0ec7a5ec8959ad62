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

/** `/runs ID` or `/cancel ID` naming no run. */
export const NO_SUCH_RUN = 'No coding run found for that id.';
/** `/cancel` of a run that has ended. */
export const RUN_ALREADY_ENDED = 'That coding run has already finished.';
/** `/cancel` of a queued run that started or ended meanwhile. */
export const QUEUED_RUN_MOVED_ON = 'That coding run has already started or finished; /cancel it again if it is active.';
/** A plain message in a DM that is no command and no reply to a run. */
export const TEXT_IN_DM = 'Send /help for the commands, or reply to a [run …] message to continue that run.';
/** `/doctor` outside the running service. */
export const DOCTOR_ELSEWHERE = 'The doctor is available from the running service; run `baton doctor` on the machine.';

/** `/cancel` of an active run, by what the cancel reached; `tag` is the run's `[run …]` tag. */
export function cancelAnswerText(tag: string, result: 'cancelled' | 'requested' | 'finished' | 'unrecorded'): string {
  switch (result) {
    case 'cancelled':
      return `${tag} cancelled.`;
    case 'requested':
      return `${tag} cancel requested from the baton process running it; its outcome follows.`;
    case 'finished':
      return RUN_ALREADY_ENDED;
    case 'unrecorded':
      return `${tag} ${UNRECORDED}`;
  }
}

/**
 * `/stop`'s answer: `stopped` active runs, `dropped` queued ones, `undownloaded` launches still
 * downloading, and the tags of the runs whose cancel is not recorded yet.
 */
export function stoppedText(stopped: number, dropped: number, undownloaded: number, unrecordedTags: string[]): string {
  return (
    `Stopped ${stopped} active run${stopped === 1 ? '' : 's'}.` +
    (dropped > 0 ? ` Cancelled ${dropped} queued run${dropped === 1 ? '' : 's'}.` : '') +
    (undownloaded > 0
      ? ` Stopped ${undownloaded} launch${undownloaded === 1 ? '' : 'es'} still downloading ${undownloaded === 1 ? 'its' : 'their'} files.`
      : '') +
    (unrecordedTags.length > 0 ? ` ${unrecordedTags.join(', ')}: ${UNRECORDED}` : '')
  );
}

/** `/redeliver ID` of something that is no dead letter; `quoted` is the id as shown. */
export function notDeadLetterText(quoted: string): string {
  return `#${quoted} is not a dead letter (see /runs for the list).`;
}

/** `/redeliver`: the delivery `id` was sent again, or (`sent` false) is queued again. */
export function redeliveredText(id: number | string, sent: boolean): string {
  return sent
    ? `#${id} sent again.`
    : `#${id} is queued again; the platform refused it for now, and baton keeps retrying.`;
}

/** `/use` of a directory `remote` (`node:path`) on another node. */
export function useRemoteText(remote: string, node: string): string {
  return `Runs in this conversation now default to ${remote} (on node ${node}, which checks the directory at each launch).`;
}

/** `/use` of a directory `cwd` on this node. */
export function useLocalText(cwd: string): string {
  return `Runs in this conversation now default to ${cwd}.`;
}

/** `/whoami`. */
export function whoamiText(platform: string, senderId: string, chatId: string, role: string): string {
  return `Your ${platform} user id: ${senderId}\nThis chat: ${chatId}\nRole: ${role}`;
}

/** Files sent without a command: `count` of them, held for `minutes`. */
export function heldFilesText(count: number, minutes: number): string {
  return `Got it — ${count === 1 ? 'it goes' : 'they go'} with your next /codex or /claude (within ${minutes} minutes).`;
}

/** A launch still downloading its files when `/stop` came. */
export const STOPPED_WHILE_DOWNLOADING =
  'Stopped before it started: /stop came while its files were downloading. Send the command again to run it.';
