/**
 * Transcripts waiting for the owner's Run or Edit, with their audio. In memory: a restart
 * forgets them (Run then answers that the note is gone; the owner sends it again).
 */
import { randomBytes } from 'node:crypto';
import type { InboundMessage } from '../../channels/types.js';
import type { Clock } from '../../core/clock.js';

/** How long a transcript waits for Run or Edit, in ms. */
export const HOLD_VOICE_MS = 30 * 60_000;

/** Most transcripts held at once; the oldest goes first (each holds its audio, up to `[voice] max_mb`). */
const MAX_HELD_VOICE_NOTES = 8;

/** A voice note's audio as downloaded. */
export interface VoiceAudio {
  bytes: Buffer;
  /** The name the platform gave it (its extension names the format). */
  filename: string;
  mimeType?: string | undefined;
}

/** A transcript waiting for Run or Edit. */
export interface HeldVoiceNote {
  /** The voice note's message (its files and voice already taken off). */
  message: InboundMessage;
  transcript: string;
  audio: VoiceAudio;
}

/** Transcripts waiting for Run or Edit, by a random id carried in the buttons. */
export class VoiceNotes {
  private readonly held = new Map<string, HeldVoiceNote & { untilMs: number }>();

  constructor(private readonly clock: Pick<Clock, 'nowMs'>) {}

  /** Holds a transcript; @returns the id its buttons carry (16 hex digits). */
  hold(note: HeldVoiceNote): string {
    const nowMs = this.clock.nowMs();
    for (const [id, entry] of this.held) if (entry.untilMs <= nowMs) this.held.delete(id);
    while (this.held.size >= MAX_HELD_VOICE_NOTES) this.held.delete(this.held.keys().next().value!);
    const id = randomBytes(8).toString('hex');
    this.held.set(id, { ...note, untilMs: nowMs + HOLD_VOICE_MS });
    return id;
  }

  /** The transcript held under `id` in chat `chatId` (and forgets it), unless it expired. */
  take(id: string, chatId: string): HeldVoiceNote | undefined {
    const entry = this.held.get(id);
    if (!entry || entry.message.chatId !== chatId) return undefined;
    this.held.delete(id);
    return entry.untilMs > this.clock.nowMs() ? entry : undefined;
  }
}
