/** What `baton approve` and `baton grant path` print about their edit of `config.toml`. */

/**
 * The edit made: `done` (e.g. `Granted DIR in CONFIG`), the changed lines, and when it takes effect.
 *
 * @param diff - the before/after lines of the edit, as `ConfigEdit.diff` gives them.
 */
export function configEdited(done: string, diff: string): string {
  return `${done}:\n${diff}\nA running service applies it to its next command; no restart needed.`;
}
