/** Run and Edit, under a voice note's transcript. */
import type { InboundPress } from '../../channels/types.js';
import { VOICE_EDIT, VOICE_GONE, voiceRanText, voiceTranscriptShownWhole } from '../../wording/voice.js';
import type { DispatchContext } from '../context.js';
import { actOnTranscript } from '../inbound/voice.js';
import type { HeldVoiceNote } from '../inbound/voice-notes.js';
import type { PressAnswer } from './outcome.js';

/**
 * Run: the transcript is acted on as the owner's message in the voice note's place (a launch
 * claims the press's dedupe key, so a replayed press launches nothing twice).
 */
export async function pressVoiceRun(ctx: DispatchContext, press: InboundPress): Promise<PressAnswer> {
  const note = ctx.voiceNotes.take(press.arg, press.chatId);
  if (!note) return VOICE_GONE;
  // A transcript cut on its card was never offered Run: the press was not made on what was shown.
  if (!voiceTranscriptShownWhole(note.transcript)) return editAnswer(ctx, note);
  const result = await actOnTranscript(
    ctx,
    { ...note.message, dedupeKey: press.dedupeKey, receivedAt: press.receivedAt },
    note.transcript,
    note.audio,
  );
  return { text: voiceRanText(result.kind === 'launched'), done: true };
}

/** Edit: the transcript comes back as a message of its own, to copy, correct and send. */
export async function pressVoiceEdit(ctx: DispatchContext, press: InboundPress): Promise<PressAnswer> {
  const note = ctx.voiceNotes.take(press.arg, press.chatId);
  if (!note) return VOICE_GONE;
  return editAnswer(ctx, note);
}

/** The transcript given back as a message of its own. */
async function editAnswer(ctx: DispatchContext, note: HeldVoiceNote): Promise<PressAnswer> {
  await ctx.reply(note.message, VOICE_EDIT);
  await ctx.reply(note.message, note.transcript);
  return { text: VOICE_EDIT, done: true };
}
