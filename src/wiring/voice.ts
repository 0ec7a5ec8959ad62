/**
 * The service's voice transcription: `[voice]` with the key its `key_env` names, read from the
 * environment merged with `$BATON_HOME/.env` at each voice note (a key added there takes effect
 * with the next config refresh of `[voice]`, no code reads it elsewhere).
 */
import { transcribe } from '../channels/transcribe.js';
import type { BatonConfig, VoiceConfig } from '../config/index.js';
import type { VoiceAudio } from '../dispatch/inbound/voice-notes.js';

/** The environment's values by name, as merged from the process and `$BATON_HOME/.env`. */
type RawEnv = Readonly<Record<string, string | undefined>>;

/** The key `[voice] key_env` names, when it is set and not empty. */
function voiceKey(voice: VoiceConfig, rawEnv: RawEnv): string | undefined {
  const key = voice.keyEnv === undefined ? undefined : rawEnv[voice.keyEnv];
  return key === undefined || key === '' ? undefined : key;
}

/** The dispatcher's `transcribe`: the audio posted to `[voice] url` with the key. */
export function voiceTranscriber(rawEnv: RawEnv) {
  return (audio: VoiceAudio, voice: VoiceConfig, signal: AbortSignal): Promise<string> =>
    transcribe({
      url: voice.url,
      model: voice.model,
      key: voiceKey(voice, rawEnv),
      language: voice.language,
      audio: audio.bytes,
      filename: audio.filename,
      mimeType: audio.mimeType,
      signal,
    });
}

/** The variable `[voice] key_env` names, which no run is given even when `pass_env` lists it. */
export function voiceSecretNames(config: BatonConfig): string[] {
  return config.voice?.keyEnv === undefined ? [] : [config.voice.keyEnv];
}

/** The voice key's value, for the logger's scrubbing; none when unset. */
export function voiceSecretValues(config: BatonConfig, rawEnv: RawEnv): string[] {
  const key = config.voice ? voiceKey(config.voice, rawEnv) : undefined;
  return key === undefined ? [] : [key];
}
