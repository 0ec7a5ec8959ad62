/** `[voice]`: off without the table, its defaults, and the URLs it refuses. */
import { describe, expect, it } from 'vitest';
import { parseConfigToml } from '../../src/config/index.js';

const options = { configPath: '/home/owner/.baton/config.toml', homeDir: '/home/owner' };
const voice = (lines: string) => parseConfigToml(`[voice]\n${lines}\n`, options).voice;

describe('[voice]', () => {
  it('is off without the table', () => {
    expect(parseConfigToml('', options).voice).toBeUndefined();
  });

  it('resolves its defaults: 300 s, 25 MiB, 60 s, confirm', () => {
    expect(voice('url = "https://api.openai.com/v1"\nmodel = "whisper-1"')).toEqual({
      url: 'https://api.openai.com/v1',
      model: 'whisper-1',
      keyEnv: undefined,
      language: undefined,
      maxSeconds: 300,
      maxBytes: 25 * 1024 * 1024,
      timeoutMs: 60_000,
      confirm: true,
    });
  });

  it.each([
    ['a non-http URL', 'url = "ftp://example.com/v1"\nmodel = "m"'],
    ['a URL with a password in it', 'url = "https://user:sk-secret@example.com/v1"\nmodel = "m"'],
    ['no model', 'url = "http://127.0.0.1:8080/v1"'],
    ['a key_env that is no variable name', 'url = "http://127.0.0.1:8080/v1"\nmodel = "m"\nkey_env = "sk-123 456"'],
    ['a language that is no ISO-639-1 code', 'url = "http://127.0.0.1:8080/v1"\nmodel = "m"\nlanguage = "English"'],
  ])('refuses %s', (_what, lines) => {
    expect(() => voice(lines)).toThrow(expect.objectContaining({ code: 'config_invalid' }));
  });

  it('never repeats a URL it refuses, which may hold a key', () => {
    expect(() => voice('url = "https://user:sk-secret@example.com/v1"\nmodel = "m"')).toThrow(
      expect.objectContaining({ message: expect.not.stringContaining('sk-secret') }),
    );
  });
});
