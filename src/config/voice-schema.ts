/**
 * The `[voice]` table of `config.toml`: where the owner's voice notes are transcribed (an
 * OpenAI-compatible `POST URL/audio/transcriptions`, OpenAI API reference "Create transcription"),
 * and its resolved form. The section is built from schema.ts's key helpers, handed in, so that
 * this file does not import schema.ts back.
 */
import { z } from 'zod';

/** The key helpers of schema.ts this section is built with. */
export interface VoiceKeyHelpers {
  documented<T extends z.ZodType>(schema: T, type: string, description: string): T;
  integerKey(
    range: { unit?: string; min: number; max: number; default: number },
    description: string,
  ): z.ZodDefault<z.ZodNumber>;
  booleanKey(fallback: boolean, description: string): z.ZodDefault<z.ZodBoolean>;
}

/** An environment variable name, as `key_env` holds it. */
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** An http(s) URL without credentials in it (a key belongs in `key_env`). */
const baseUrl = z.string().refine((value) => {
  if (!URL.canParse(value)) return false;
  const url = new URL(value);
  return (url.protocol === 'http:' || url.protocol === 'https:') && url.username === '' && url.password === '';
}, 'must be an http:// or https:// URL without a user name or password in it');

/** The `[voice]` table's schema. */
export function voiceSectionOf(keys: VoiceKeyHelpers) {
  return z.strictObject({
    url: keys.documented(
      baseUrl,
      'http(s) URL',
      'Base URL of an OpenAI-compatible transcription API; baton posts the voice note to URL/audio/transcriptions (e.g. "https://api.openai.com/v1", or a local whisper.cpp or faster-whisper server). Without a [voice] table voice notes are not transcribed.',
    ),
    model: keys.documented(
      z.string().min(1),
      'string',
      'The transcription model the endpoint is asked for, e.g. "whisper-1".',
    ),
    key_env: keys.documented(
      z.string().regex(ENV_NAME, 'an environment variable name').optional(),
      'environment variable name',
      'Name of the variable in $BATON_HOME/.env (or the service environment) holding the API key, sent as "Authorization: Bearer KEY"; never passed to runs. Unset: no key is sent.',
    ),
    language: keys.documented(
      z
        .string()
        .regex(/^[a-z]{2,3}$/, 'an ISO-639-1 code such as "en"')
        .optional(),
      'ISO-639-1 code',
      'Language of the voice notes, as an ISO-639-1 code ("en", "de"); unset: the endpoint detects it.',
    ),
    max_seconds: keys.integerKey(
      { unit: 'seconds', min: 1, max: 7200, default: 300 },
      'Longest voice note transcribed, in seconds; a longer one is answered with the limit, never downloaded.',
    ),
    max_mb: keys.integerKey(
      { unit: 'MiB', min: 1, max: 100, default: 25 },
      'Largest voice note downloaded and sent, in MiB (OpenAI takes files up to 25 MB).',
    ),
    timeout_seconds: keys.integerKey(
      { unit: 'seconds', min: 1, max: 600, default: 60 },
      "Longest a voice note's download and transcription may take, in seconds; the conversation's next messages wait at most this long.",
    ),
    confirm: keys.booleanKey(
      true,
      'Whether the owner sees the transcript with Run and Edit before it is acted on; false: it is acted on at once, and a run started from it shows it in its started message.',
    ),
  });
}

/** `[voice]` as written. */
export type VoiceFile = z.output<ReturnType<typeof voiceSectionOf>>;

/** `[voice]`, resolved: durations in ms, sizes in bytes. */
export interface VoiceConfig {
  /** Base URL; baton posts to `<url>/audio/transcriptions`. */
  readonly url: string;
  readonly model: string;
  /** Name of the variable holding the API key; undefined: no key is sent. */
  readonly keyEnv: string | undefined;
  /** ISO-639-1 code; undefined: the endpoint detects it. */
  readonly language: string | undefined;
  /** Longest voice note, in seconds. @default 300 */
  readonly maxSeconds: number;
  /** Largest voice note, in bytes. @default 25 MiB */
  readonly maxBytes: number;
  /** Longest download and transcription of one voice note, in ms. @default 60 000 */
  readonly timeoutMs: number;
  /** Show the transcript with Run and Edit before acting on it. @default true */
  readonly confirm: boolean;
}

/** Resolves `[voice]`. */
export function resolveVoice(file: VoiceFile): VoiceConfig {
  return {
    url: file.url,
    model: file.model,
    keyEnv: file.key_env,
    language: file.language,
    maxSeconds: file.max_seconds,
    maxBytes: file.max_mb * 1024 * 1024,
    timeoutMs: file.timeout_seconds * 1000,
    confirm: file.confirm,
  };
}
