/**
 * Redaction of secret values from text: log lines, messages, anything that may quote an SDK's
 * request URL or a driver's connection string. Works by value, not by field name, so a secret
 * nested in an error's cause, its stack or a URL is found wherever it sits.
 */

/** What stands where a secret was. JSON-safe (no quote, no backslash), so a scrubbed JSON line stays JSON. */
export const REDACTED = '[redacted]';

/**
 * Shortest value scrubbed, in characters: a shorter "secret" (a one-letter password) would wreck
 * every line (timestamps, keys) while protecting nothing a guess would not find.
 */
export const MIN_SECRET_CHARS = 4;

/** A function that returns its text with every known secret replaced by {@link REDACTED}. */
export type Scrub = (text: string) => string;

/**
 * Builds a scrubber for `secrets`. Each value is matched as written, JSON-escaped (how it sits
 * inside a JSON log line), percent-encoded (how it sits in a URL: a password with `/` or `@`) and
 * percent-encoded then JSON-escaped. Longer forms are replaced first, so a secret that contains
 * another is redacted whole.
 */
export function secretScrubber(secrets: readonly string[]): Scrub {
  const forms = new Set<string>();
  for (const secret of secrets) {
    if (secret.length < MIN_SECRET_CHARS) continue;
    for (const form of [secret, encodeURIComponent(secret), encodeURI(secret)]) {
      forms.add(form);
      forms.add(JSON.stringify(form).slice(1, -1));
    }
  }
  const ordered = [...forms].sort((a, b) => b.length - a.length);
  if (ordered.length === 0) return (text) => text;
  return (text) => {
    let out = text;
    for (const form of ordered) if (out.includes(form)) out = out.split(form).join(REDACTED);
    return out;
  };
}
