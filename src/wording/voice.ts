/** What baton says about voice notes: off, refused, failed, and the transcript shown back. */

/** Longest transcript shown in a `started` message, in characters; the rest is cut with `…`. */
const STARTED_TRANSCRIPT_MAX_LENGTH = 500;
/** Longest transcript shown above Run and Edit, in characters (the message must fit every platform). */
const CONFIRM_TRANSCRIPT_MAX_LENGTH = 3000;

/** Button labels under a transcript. */
export const VOICE_BUTTONS = { run: 'Run', edit: 'Edit' } as const;

/** A voice note while `[voice]` is not configured (one line, with how to turn it on). */
export const VOICE_OFF =
  'Voice notes are off: add a [voice] table with url and model to config.toml (see docs/voice.md), then restart baton.';

/** A guest's voice note: never downloaded, never transcribed. */
export const VOICE_OWNER_ONLY = 'Voice notes are transcribed for the owner only.';

/** A Run or Edit press whose transcript is no longer held (answered, expired, or baton restarted). */
export const VOICE_GONE = 'That voice note is no longer held; send it again.';

/** The transcription came back empty. */
export const VOICE_EMPTY = 'The voice note was transcribed, but no words came back. Send it again or type it.';

/** The answer to Edit, above the transcript to copy. */
export const VOICE_EDIT = 'Copy the transcript below, correct it, and send it as a message:';

/** A press of Run; `launched`: it started a run (whose messages follow). */
export function voiceRanText(launched: boolean): string {
  return launched ? 'Running it.' : 'Sent.';
}

/** A voice note over `[voice] max_seconds`. */
export function voiceTooLongText(seconds: number, maxSeconds: number): string {
  return `That voice note is ${seconds} s long; [voice] max_seconds allows ${maxSeconds} s. Send a shorter one, or raise the limit.`;
}

/** A voice note over `[voice] max_mb`. */
export function voiceTooLargeText(maxMb: number): string {
  return `That voice note is over [voice] max_mb (${maxMb} MiB). Send a shorter one, or raise the limit.`;
}

/** The endpoint (or the platform's download) failed; `reason` is one line without secrets. */
export function voiceFailedText(reason: string): string {
  return `The voice note could not be transcribed: ${reason}.`;
}

/** Cuts `text` to `max` characters with `…`. */
function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/**
 * Whether the confirmation shows the whole transcript: Run is offered only then, so the owner
 * never runs words they were not shown.
 */
export function voiceTranscriptShownWhole(transcript: string): boolean {
  return transcript.length <= CONFIRM_TRANSCRIPT_MAX_LENGTH;
}

/** The transcript shown with Run and Edit under it (Edit only when it is cut). */
export function voiceConfirmText(transcript: string): string {
  if (!voiceTranscriptShownWhole(transcript))
    return `🎙 I heard (cut, too long to show whole):\n${cut(transcript, CONFIRM_TRANSCRIPT_MAX_LENGTH)}\n\nEdit it to read all of it before it runs.`;
  return `🎙 I heard:\n${transcript}\n\nRun it, or Edit it first?`;
}

/** A `started` message of a run launched from a voice note, with what was heard. */
export function withTranscriptText(startedBody: string, transcript: string): string {
  return `${startedBody}\n🎙 ${cut(transcript, STARTED_TRANSCRIPT_MAX_LENGTH)}`;
}
