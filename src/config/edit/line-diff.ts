/** The before/after of an edit, as printed by `baton approve` and `baton grant path`. */

/** `--- / +++ / @@` hunk of the lines that differ, with one line of context each side. */
export function lineDiff(file: string, before: string, after: string): string {
  const lines = (text: string): string[] => (text === '' ? [] : text.replace(/\r?\n$/, '').split(/\r?\n/));
  const a = lines(before);
  const b = lines(after);
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head += 1;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail])
    tail += 1;
  const before1 = head > 0 ? [` ${a[head - 1]}`] : [];
  const after1 = tail > 0 ? [` ${a[a.length - tail]}`] : [];
  const removed = a.slice(head, a.length - tail).map((l) => `-${l}`);
  const added = b.slice(head, b.length - tail).map((l) => `+${l}`);
  const start = head - before1.length + 1;
  // Unified diff numbers an empty range by the line before it.
  const range = (count: number): string => `${count === 0 ? start - 1 : start},${count}`;
  const context = before1.length + after1.length;
  return [
    `--- ${file}`,
    `+++ ${file}`,
    `@@ -${range(removed.length + context)} +${range(added.length + context)} @@`,
    ...before1,
    ...removed,
    ...added,
    ...after1,
  ].join('\n');
}
