/**
 * A voice note from the owner: downloaded (owner only) within `[voice] max_mb`, transcribed within
 * `[voice] timeout_seconds`, then acted on as the same text typed would be — a command when it
 * starts with a vendor's name, else a plain message — at once or after the owner's Run.
 */
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { PLATFORM_ABILITIES, type InboundMessage } from '../../channels/types.js';
import type { VoiceConfig } from '../../config/index.js';
import { BatonError, isBatonError } from '../../core/errors.js';
import type { RunId } from '../../core/ids.js';
import { VENDOR_NAMES } from '../../core/vendor-name.js';
import {
  VOICE_BUTTONS,
  VOICE_EMPTY,
  VOICE_OFF,
  VOICE_OWNER_ONLY,
  voiceConfirmText,
  voiceFailedText,
  voiceTooLargeText,
  voiceTooLongText,
  voiceTranscriptShownWhole,
} from '../../wording/voice.js';
import { FORWARDED_REFUSAL } from '../../wording/dispatch.js';
import { parseCommand } from '../command.js';
import { act } from '../commands/act.js';
import { actionOf } from '../commands/action.js';
import type { DispatchContext } from '../context.js';
import type { DispatchResult } from '../deps.js';
import type { Role } from '../trust.js';
import type { VoiceAudio } from './voice-notes.js';

/** The press actions of the buttons under a transcript. */
export const VOICE_ACTIONS = { run: 'voice_run', edit: 'voice_edit' } as const;

/**
 * The text a transcript stands for: a first word naming a vendor ("Codex, fix the tests.")
 * becomes its command (`/codex fix the tests.`), since nobody says the slash; else the
 * transcript as it is, a plain message.
 */
export function commandTextOf(transcript: string): string {
  const match = /^\s*(\p{L}+)(?:[\s,.:;!?-]+([\s\S]*))?$/u.exec(transcript);
  const word = match?.[1]?.toLowerCase();
  const vendor = VENDOR_NAMES.find((name) => name === word);
  if (!vendor) return transcript;
  const rest = match?.[2]?.trim() ?? '';
  return rest === '' ? `/${vendor}` : `/${vendor} ${rest}`;
}

/** Reads the audio, refusing it past `maxBytes`. */
async function readAudio(stream: Readable, maxBytes: number, maxMb: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of stream) {
    bytes += (chunk as Buffer).length;
    if (bytes > maxBytes) {
      stream.destroy();
      throw new BatonError('voice_refused', voiceTooLargeText(maxMb));
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/**
 * Downloads and transcribes the owner's voice note within `[voice] timeout_seconds`.
 *
 * @throws BatonError `voice_refused` (too long, too large), `voice_failed` (the download or the endpoint).
 */
async function transcribeNote(
  ctx: DispatchContext,
  message: InboundMessage,
  voice: VoiceConfig,
): Promise<{ transcript: string; audio: VoiceAudio }> {
  const note = message.voice!;
  if (note.durationSeconds !== undefined && note.durationSeconds > voice.maxSeconds)
    throw new BatonError('voice_refused', voiceTooLongText(note.durationSeconds, voice.maxSeconds));
  const maxMb = voice.maxBytes / (1024 * 1024);
  if (note.sizeBytes !== undefined && note.sizeBytes > voice.maxBytes)
    throw new BatonError('voice_refused', voiceTooLargeText(maxMb));
  const signal = AbortSignal.timeout(voice.timeoutMs);
  let bytes: Buffer;
  try {
    bytes = await readAudio(await note.open(signal), voice.maxBytes, maxMb);
  } catch (err) {
    if (isBatonError(err, 'voice_refused')) throw err;
    const why = signal.aborted
      ? `the download took longer than [voice] timeout_seconds (${voice.timeoutMs / 1000} s)`
      : `the download failed (${err instanceof Error ? err.message : String(err)})`;
    throw new BatonError('voice_failed', why, { cause: err });
  }
  const audio = { bytes, filename: note.name, mimeType: note.mimeType };
  const transcript = await ctx.deps.transcribe!(audio, voice, signal);
  return { transcript, audio };
}

/** Keeps the audio of a run's voice note in the run's directory (0600), swept with it; this node's runs only. */
async function keepAudio(ctx: DispatchContext, runId: RunId, audio: VoiceAudio): Promise<void> {
  const run = await ctx.deps.store.runs.getRun(runId);
  if (!run || (ctx.deps.fleet && run.node && run.node !== ctx.deps.fleet.name)) return;
  const dir = join(ctx.deps.runsDir, runId);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const path = join(dir, `voice-note${/\.[A-Za-z0-9]{1,5}$/.exec(audio.filename)?.[0] ?? ''}`);
  await writeFile(path, audio.bytes, { mode: 0o600 });
  await chmod(path, 0o600);
}

/**
 * Acts on a transcript as on the same text typed by the owner in that message's place; the
 * audio goes into the run's directory when a run starts from it.
 */
export async function actOnTranscript(
  ctx: DispatchContext,
  message: InboundMessage,
  transcript: string,
  audio: VoiceAudio,
): Promise<DispatchResult> {
  const text = commandTextOf(transcript);
  const { voice: _voice, attachments: _attachments, ...rest } = message;
  const spoken: InboundMessage = { ...rest, text, voiceTranscript: transcript };
  let command: ReturnType<typeof parseCommand> | BatonError;
  try {
    command = parseCommand(text, PLATFORM_ABILITIES[message.platform].bareCommands);
  } catch (err) {
    if (!isBatonError(err)) throw err;
    command = err;
  }
  const action = command instanceof BatonError ? 'launch' : actionOf(command);
  const result = await act(ctx, spoken, 'owner', action, command);
  if (result.kind === 'launched') await keepAudio(ctx, result.runId, audio);
  return result;
}

/**
 * A voice note, claimed: the owner's is transcribed and acted on (or shown with Run and Edit
 * first, `[voice] confirm`); anyone else's, or a forwarded one, is never downloaded. Every refusal and failure is
 * a reply with its reason.
 */
export async function voiceNote(ctx: DispatchContext, message: InboundMessage, role: Role): Promise<DispatchResult> {
  if (role !== 'owner') {
    await ctx.reply(message, VOICE_OWNER_ONLY);
    return { kind: 'refused', code: 'not_authorized' };
  }
  // Somebody else's words, forwarded: refused as a forwarded text is, before the audio leaves.
  if (message.forwarded) {
    await ctx.reply(message, FORWARDED_REFUSAL);
    return { kind: 'refused', code: 'forwarded_message' };
  }
  const voice = ctx.config.voice;
  if (!voice || !ctx.deps.transcribe) {
    await ctx.reply(message, VOICE_OFF);
    return { kind: 'refused', code: 'voice_refused' };
  }
  let heard: { transcript: string; audio: VoiceAudio };
  try {
    heard = await transcribeNote(ctx, message, voice);
  } catch (err) {
    if (!isBatonError(err, 'voice_refused') && !isBatonError(err, 'voice_failed')) throw err;
    ctx.deps.logger.info({ code: err.code, platform: message.platform }, 'voice note not transcribed');
    await ctx.reply(message, err.code === 'voice_failed' ? voiceFailedText(err.message) : err.message);
    return { kind: 'refused', code: err.code };
  }
  if (heard.transcript === '') {
    await ctx.reply(message, VOICE_EMPTY);
    return { kind: 'refused', code: 'voice_failed' };
  }
  if (!voice.confirm) return actOnTranscript(ctx, message, heard.transcript, heard.audio);
  const { voice: _voice, attachments: _attachments, ...rest } = message;
  const id = ctx.voiceNotes.hold({ message: rest, transcript: heard.transcript, audio: heard.audio });
  const edit = { label: VOICE_BUTTONS.edit, action: VOICE_ACTIONS.edit, arg: id };
  await ctx.reply(
    message,
    voiceConfirmText(heard.transcript),
    voiceTranscriptShownWhole(heard.transcript)
      ? [{ label: VOICE_BUTTONS.run, action: VOICE_ACTIONS.run, arg: id }, edit]
      : [edit],
  );
  return { kind: 'answered' };
}
