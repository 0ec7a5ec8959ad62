/**
 * The files of a run the console reads, all in the run directory on this node
 * (`$BATON_HOME/harness/runs/<run id>/`): `events.jsonl` (the stored event stream, read a page at
 * a time), `<run id>.patch` (the outcome's patch, secret-looking files already left out) and
 * `result.md`. The run id was checked against baton's own shape before it reaches a path.
 */
import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

/** Events per transcript page: a run with 10,000 events opens with its first page only. */
export const EVENTS_PER_PAGE = 500;

/** Largest patch shown on the page, in bytes; the download has it all. */
export const MAX_SHOWN_PATCH_BYTES = 1024 * 1024;

/** The run directory of `runId` under `batonHome`. */
export function runDirOf(batonHome: string, runId: string): string {
  return join(batonHome, 'harness', 'runs', runId);
}

/** One page of a run's stored events: lines `from` to `from + limit`, and how many lines there are. */
export interface EventsPage {
  events: unknown[];
  /** Lines in the file (events, and any line that did not parse). */
  total: number;
}

/**
 * Reads lines `[from, from + limit)` of `events.jsonl`, parsing only those; a line that is not
 * JSON is skipped (the spool may end in a cut line).
 *
 * @returns undefined when the file does not exist (a run of another node, or one that never started).
 */
export async function readEventsPage(runDir: string, from: number, limit: number): Promise<EventsPage | undefined> {
  const stream = createReadStream(join(runDir, 'events.jsonl'), { encoding: 'utf8' });
  const opened = await new Promise<boolean>((resolve, reject) => {
    stream.once('ready', () => resolve(true));
    stream.once('error', (err: NodeJS.ErrnoException) => (err.code === 'ENOENT' ? resolve(false) : reject(err)));
  });
  if (!opened) return undefined;
  const events: unknown[] = [];
  let total = 0;
  for await (const line of createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY })) {
    if (line === '') continue;
    if (total >= from && total < from + limit) {
      try {
        events.push(JSON.parse(line) as unknown);
      } catch {
        // A cut last line or a framing error the run already counted: nothing to show.
      }
    }
    total += 1;
  }
  return { events, total };
}

/** A file of the run directory, or undefined when it is not there. */
export async function readRunFile(runDir: string, name: string): Promise<Buffer | undefined> {
  try {
    return await readFile(join(runDir, name));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}
