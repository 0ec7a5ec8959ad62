/**
 * Numbers chat sends for rows baton numbers itself (a dead letter's `/redeliver 42`, an
 * approval's button): checked before they reach the database, whose `bigserial` refuses a
 * number past its range with an error the inbox would retry for ever.
 */

/**
 * A row number as typed or pressed: decimal digits, 1 to `Number.MAX_SAFE_INTEGER` (the ids
 * are read as JavaScript numbers, drizzle `bigserial` mode `number`, so none is larger).
 *
 * @returns the number, or undefined for anything else (no row can have it).
 */
export function parseSerialId(text: string): number | undefined {
  if (!/^\d{1,16}$/.test(text)) return undefined;
  const id = Number(text);
  return id >= 1 && Number.isSafeInteger(id) ? id : undefined;
}

/** `text` cut for an answer that quotes it (a pasted 4,000-digit "id" is not echoed whole). */
export function quotedId(text: string): string {
  return text.length <= 24 ? text : `${text.slice(0, 23)}…`;
}
