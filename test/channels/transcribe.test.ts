/** The transcription client against a fake OpenAI-compatible endpoint on 127.0.0.1 that checks the request. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { transcribe, transcriptionUrl } from '../../src/channels/transcribe.js';
import { startFakeTranscription, type FakeTranscription } from '../fakes/fake-transcription.js';

const KEY = 'sk-test-voice-key-never-shown';
const AUDIO = Buffer.from('OggS fake opus bytes');

let fake: FakeTranscription;
let elsewhere: FakeTranscription;

beforeAll(async () => {
  fake = await startFakeTranscription({ key: KEY });
  elsewhere = await startFakeTranscription();
});
afterAll(async () => {
  await fake?.close();
  await elsewhere?.close();
});

const request = (overrides: Partial<Parameters<typeof transcribe>[0]> = {}) => ({
  url: fake.url,
  model: 'whisper-1',
  key: KEY,
  language: 'en',
  audio: AUDIO,
  filename: 'voice-7.ogg',
  mimeType: 'audio/ogg',
  signal: AbortSignal.timeout(30_000),
  ...overrides,
});

describe('transcribe', () => {
  it('posts the file part, the model, the language and the key, and returns the text', async () => {
    fake.enqueue({ kind: 'text', text: '  codex fix the flaky test \n' });
    await expect(transcribe(request())).resolves.toBe('codex fix the flaky test');
    const seen = fake.requests.at(-1)!;
    expect(seen.status).toBe(200);
    expect(seen.authorization).toBe(`Bearer ${KEY}`);
    expect(seen.file).toEqual({ filename: 'voice-7.ogg', bytes: AUDIO });
    expect(seen.fields).toEqual({ model: 'whisper-1', response_format: 'json', language: 'en' });
  });

  it('sends no Authorization header and no language when none is configured', async () => {
    await expect(transcribe(request({ url: `${elsewhere.url}/`, key: undefined, language: undefined }))).resolves.toBe(
      'hello',
    );
    const seen = elsewhere.requests.at(-1)!;
    expect(seen.authorization).toBeUndefined();
    expect(seen.fields).toEqual({ model: 'whisper-1', response_format: 'json' });
  });

  it('a refused key is a voice_failed with the status and the endpoint message, never the key', async () => {
    const err: Error = await transcribe(request({ key: `${KEY}-wrong` })).then(
      () => new Error('no failure'),
      (e: unknown) => e as Error,
    );
    expect(err).toMatchObject({ code: 'voice_failed' });
    expect(err.message).toContain('HTTP 401: Incorrect API key provided.');
    expect(err.message).not.toContain(KEY);
  });

  it('a server error is answered with its status', async () => {
    fake.enqueue({ kind: 'error', status: 503, message: 'model overloaded' });
    await expect(transcribe(request())).rejects.toMatchObject({
      code: 'voice_failed',
      message: expect.stringContaining('HTTP 503: model overloaded'),
    });
  });

  it('an endpoint that never answers ends with the signal', async () => {
    fake.enqueue({ kind: 'hang' });
    await expect(transcribe(request({ signal: AbortSignal.timeout(300) }))).rejects.toMatchObject({
      code: 'voice_failed',
      message: expect.stringContaining('did not answer in time'),
    });
  });

  it('a redirect is never followed: the other host gets neither the audio nor the key', async () => {
    const before = elsewhere.requests.length;
    fake.enqueue({ kind: 'redirect', location: `${elsewhere.url}/audio/transcriptions` });
    await expect(transcribe(request())).rejects.toMatchObject({
      code: 'voice_failed',
      message: expect.stringContaining('redirected (HTTP 307)'),
    });
    expect(elsewhere.requests.length).toBe(before);
  });

  it('joins the base URL and the path whatever slash the base ends with', () => {
    expect(transcriptionUrl('https://api.openai.com/v1/').href).toBe('https://api.openai.com/v1/audio/transcriptions');
    expect(transcriptionUrl('http://127.0.0.1:8080').href).toBe('http://127.0.0.1:8080/audio/transcriptions');
  });
});
