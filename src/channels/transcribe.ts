/**
 * Transcribes one voice note through an OpenAI-compatible endpoint: `POST <url>/audio/transcriptions`
 * as multipart/form-data with the `file` part, the `model` field, `response_format=json` and
 * optionally `language`, answered `{ "text": "…" }` (OpenAI API reference "Create transcription";
 * whisper.cpp's `whisper-server` and faster-whisper servers take the same request). Redirects are
 * never followed, so neither the audio nor the key goes to a host the config did not name.
 */
import { BatonError } from '../core/errors.js';

/** One transcription request. */
export interface TranscriptionRequest {
  /** Base URL, http(s); the request goes to `<url>/audio/transcriptions`. */
  url: string;
  model: string;
  /** Sent as `Authorization: Bearer <key>`; undefined: no Authorization header. */
  key: string | undefined;
  /** ISO-639-1 code; undefined: the endpoint detects it. */
  language: string | undefined;
  audio: Buffer;
  /** The file name sent with the `file` part (its extension tells the endpoint the format). */
  filename: string;
  /** The part's media type. @default `application/octet-stream` */
  mimeType?: string | undefined;
  /** Ends the request (the voice note's timeout, or the service stopping). */
  signal: AbortSignal;
}

/** Longest part of an endpoint's error answer quoted back, in characters. */
const MAX_QUOTED_ERROR_LENGTH = 200;

/** The endpoint URL: `<url>/audio/transcriptions`, whatever slash the base ends with. */
export function transcriptionUrl(base: string): URL {
  const url = new URL(base);
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/audio/transcriptions`;
  return url;
}

/** A failure, with `reason`: one line the owner reads (never the key). */
function failure(reason: string, cause?: unknown): BatonError {
  return new BatonError('voice_failed', reason, cause === undefined ? {} : { cause });
}

/** The `error.message` of an OpenAI-style error body, else its first characters. */
function quotedError(body: string, key: string | undefined): string {
  let message = body;
  try {
    const parsed = JSON.parse(body) as { error?: { message?: unknown } | string; detail?: unknown };
    const inner = typeof parsed.error === 'string' ? parsed.error : parsed.error?.message;
    if (typeof inner === 'string') message = inner;
    else if (typeof parsed.detail === 'string') message = parsed.detail;
  } catch {
    // Not JSON: the text itself is quoted.
  }
  const oneLine = message.replace(/\s+/g, ' ').trim();
  const safe = key ? oneLine.split(key).join('[key]') : oneLine;
  return safe.length > MAX_QUOTED_ERROR_LENGTH ? `${safe.slice(0, MAX_QUOTED_ERROR_LENGTH - 1)}…` : safe;
}

/**
 * Sends the audio and returns the transcript (trimmed).
 *
 * @throws BatonError `voice_failed` with the reason: the network failed, it timed out or was
 *   stopped, the endpoint redirected (never followed), answered other than 2xx (its status and
 *   error message quoted), or answered without a `text`.
 */
export async function transcribe(request: TranscriptionRequest): Promise<string> {
  const form = new FormData();
  form.append(
    'file',
    new Blob([new Uint8Array(request.audio)], { type: request.mimeType ?? 'application/octet-stream' }),
    request.filename,
  );
  form.append('model', request.model);
  form.append('response_format', 'json');
  if (request.language) form.append('language', request.language);
  const url = transcriptionUrl(request.url);
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      body: form,
      headers: request.key ? { authorization: `Bearer ${request.key}` } : {},
      redirect: 'manual',
      signal: request.signal,
    });
  } catch (err) {
    if (request.signal.aborted) {
      const why = request.signal.reason;
      throw failure(
        why instanceof BatonError ? why.message : `the transcription endpoint at ${url.host} did not answer in time`,
        err,
      );
    }
    const cause = err instanceof Error && err.cause instanceof Error ? err.cause.message : String(err);
    throw failure(`the transcription endpoint at ${url.host} could not be reached (${cause})`, err);
  }
  const body = await response.text().catch((err: unknown) => {
    throw failure(`the transcription endpoint at ${url.host} stopped answering midway`, err);
  });
  if (response.status >= 300 && response.status < 400)
    throw failure(
      `the transcription endpoint at ${url.host} redirected (HTTP ${response.status}); baton does not follow redirects, so set [voice] url to the final address`,
    );
  if (!response.ok) {
    const quoted = quotedError(body, request.key);
    throw failure(
      `the transcription endpoint at ${url.host} answered HTTP ${response.status}${quoted ? `: ${quoted}` : ''}`,
    );
  }
  let text: unknown;
  try {
    text = (JSON.parse(body) as { text?: unknown }).text;
  } catch (err) {
    throw failure(`the transcription endpoint at ${url.host} answered something other than JSON`, err);
  }
  if (typeof text !== 'string') throw failure(`the transcription endpoint at ${url.host} answered without a text`);
  return text.trim();
}
