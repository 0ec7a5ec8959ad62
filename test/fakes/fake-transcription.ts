/**
 * A fake OpenAI-compatible transcription endpoint on 127.0.0.1: `POST /v1/audio/transcriptions`
 * checked as OpenAI's API checks it (OpenAI API reference "Create transcription"): a
 * multipart/form-data body with a `file` part that has a file name and bytes (at most 25 MB), a
 * `model` field, an optional `response_format` (`json` or `text`) and `language`, and
 * `Authorization: Bearer KEY` when the fake has a key (401 `invalid_api_key` otherwise). A
 * malformed request is answered 400 with an OpenAI error body. Answers are scripted.
 */
import { createServer } from 'node:http';
import { listenOnLoopback, readBody, RequestLog } from './loopback.js';
import { parseMultipart } from './fake-telegram.js';

/** OpenAI's largest transcription upload, in bytes ("File uploads are currently limited to 25 MB"). */
export const OPENAI_MAX_AUDIO_BYTES = 25 * 1024 * 1024;

/** The next answer of the fake. */
export type TranscriptionAnswer =
  | { kind: 'text'; text: string }
  | { kind: 'error'; status: number; message: string }
  /** Never answers (until the fake closes): a timeout. */
  | { kind: 'hang' }
  /** A 307 to `location`, which a client must not follow. */
  | { kind: 'redirect'; location: string };

/** One request as the fake saw it. */
export interface TranscriptionRequest {
  method: string;
  path: string;
  status: number;
  authorization: string | undefined;
  /** The `file` part: its name and bytes; undefined when the request had none. */
  file: { filename: string; bytes: Buffer } | undefined;
  /** The text fields (`model`, `language`, `response_format`). */
  fields: Record<string, string>;
}

/** A running fake transcription endpoint. */
export interface FakeTranscription {
  /** The base URL, `http://127.0.0.1:PORT/v1`, as `[voice] url` takes it. */
  url: string;
  requests: readonly TranscriptionRequest[];
  /** The next answers, in order; without one a valid request gets `{"text":"hello"}`. */
  enqueue(answer: TranscriptionAnswer): void;
  waitFor(predicate: (r: TranscriptionRequest) => boolean, timeoutMs: number): Promise<TranscriptionRequest>;
  close(): Promise<void>;
}

const error = (message: string, code: string | null = null) =>
  JSON.stringify({ error: { message, type: 'invalid_request_error', param: null, code } });

/** Starts the fake; `key`: the one API key it accepts (none: it takes requests without one). */
export async function startFakeTranscription(options: { key?: string } = {}): Promise<FakeTranscription> {
  const log = new RequestLog<TranscriptionRequest>('fake transcription');
  const answers: TranscriptionAnswer[] = [];
  const server = createServer((req, res) => {
    void readBody(req).then((raw) => {
      const parts = parseMultipart(raw, req.headers['content-type'] ?? '');
      const filePart = parts?.find((p) => p.name === 'file' && p.filename !== undefined);
      const fields = Object.fromEntries(
        (parts ?? []).filter((p) => p.filename === undefined).map((p) => [p.name, p.content.toString('utf8')]),
      );
      const entry: TranscriptionRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        status: 0,
        authorization: req.headers.authorization,
        file: filePart ? { filename: filePart.filename!, bytes: Buffer.from(filePart.content) } : undefined,
        fields,
      };
      const reply = (status: number, body: string, headers: Record<string, string> = {}) => {
        entry.status = status;
        log.record(entry);
        res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(body);
      };
      if (req.method !== 'POST' || req.url !== '/v1/audio/transcriptions') return reply(404, error('Not found'));
      if (options.key !== undefined && req.headers.authorization !== `Bearer ${options.key}`)
        return reply(401, error('Incorrect API key provided.', 'invalid_api_key'));
      if (!parts) return reply(400, error('Could not parse multipart form'));
      if (!filePart || filePart.content.length === 0 || filePart.filename === '')
        return reply(400, error("1 validation error: 'file' is required"));
      if (filePart.content.length > OPENAI_MAX_AUDIO_BYTES) return reply(413, error('Maximum content size exceeded.'));
      if (!fields['model']) return reply(400, error('you must provide a model parameter'));
      const format = fields['response_format'] ?? 'json';
      if (format !== 'json' && format !== 'text') return reply(400, error(`unsupported response_format ${format}`));
      if (fields['language'] !== undefined && !/^[a-z]{2,3}$/.test(fields['language']))
        return reply(400, error(`Invalid language ${fields['language']}`));
      const answer = answers.shift() ?? { kind: 'text', text: 'hello' };
      switch (answer.kind) {
        case 'text':
          return format === 'text'
            ? reply(200, answer.text, { 'content-type': 'text/plain' })
            : reply(200, JSON.stringify({ text: answer.text }));
        case 'error':
          return reply(answer.status, error(answer.message));
        case 'redirect':
          return reply(307, '', { location: answer.location });
        case 'hang':
          entry.status = -1;
          log.record(entry);
          return;
      }
    });
  });
  const listening = await listenOnLoopback(server);
  return {
    url: `${listening.url}/v1`,
    requests: log.requests,
    enqueue: (answer) => answers.push(answer),
    waitFor: (predicate, timeoutMs) => log.waitFor(predicate, timeoutMs),
    close: () => listening.close(),
  };
}
