/**
 * "Did you mean …" for a mistyped command or option: the nearest known word by edit distance,
 * when it is near enough to be a typo rather than another word.
 */

/** Levenshtein distance (insertions, deletions, substitutions; each costs 1). */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min(previous[j]! + 1, current[j - 1]! + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length]!;
}

/**
 * The known word nearest to `given`, or undefined when none is a near miss: at most 1 edit for
 * words of up to 4 characters, 2 for longer ones (`strat` → `start`, `--jsn` → `--json`).
 * Leading dashes count as characters, so `-json` still finds `--json`.
 */
export function nearestWord(given: string, known: readonly string[]): string | undefined {
  let best: { word: string; distance: number } | undefined;
  for (const word of known) {
    const distance = editDistance(given.toLowerCase(), word.toLowerCase());
    if (best === undefined || distance < best.distance) best = { word, distance };
  }
  if (best === undefined || best.distance === 0) return best?.word;
  const allowed = Math.max(given.replace(/^-+/, '').length, best.word.replace(/^-+/, '').length) <= 4 ? 1 : 2;
  return best.distance <= allowed ? best.word : undefined;
}

/** `' Did you mean "start"?'` for a near miss, else `''` (ready to append to a message). */
export function didYouMean(given: string, known: readonly string[]): string {
  const word = nearestWord(given, known);
  return word === undefined || word === given ? '' : ` Did you mean "${word}"?`;
}

/** A usage line led by its "did you mean" hint, if any: `Did you mean "path"? Usage: …`. */
export function usageWith(hint: string, usage: string): string {
  return hint ? `${hint.trim()} ${usage}` : usage;
}
