/**
 * A run's transcript in vendor-neutral steps, read back from its stored `events.jsonl`: what a
 * page shows of what the agent did. Each vendor module turns its own CLI's events into these
 * (codex-transcript.ts, claude-transcript.ts); nothing else reads their shapes.
 */

/**
 * One step of a transcript. Steps with an `id` may come twice (a command started, then done):
 * the later one replaces the earlier (see {@link foldTranscript}).
 */
export type TranscriptStep =
  | { kind: 'message'; text: string }
  | { kind: 'reasoning'; text: string }
  | {
      kind: 'command';
      id: string;
      command: string;
      output?: string;
      /** The command's exit code, when the CLI reports one (codex); absent while running. */
      exitCode?: number;
      failed: boolean;
      done: boolean;
    }
  | { kind: 'tool'; id: string; name: string; input: string; output?: string; failed: boolean; done: boolean }
  | { kind: 'files'; changes: { path: string; change: string }[] }
  | { kind: 'notice'; text: string }
  | { kind: 'result'; text: string; failed: boolean };

/** Turns one parsed event of a vendor's stream into transcript steps (often none). */
export type TranscriptReader = (event: unknown) => TranscriptStep[];

/**
 * Steps in order, with a later step of the same `id` merged into the first one's place
 * (a tool's result joins its call; a finished command replaces its start).
 */
export function foldTranscript(steps: readonly TranscriptStep[]): TranscriptStep[] {
  const out: TranscriptStep[] = [];
  const at = new Map<string, number>();
  for (const step of steps) {
    if (step.kind !== 'command' && step.kind !== 'tool') {
      out.push(step);
      continue;
    }
    const index = at.get(step.id);
    if (index === undefined) {
      at.set(step.id, out.length);
      out.push(step);
      continue;
    }
    const before = out[index]!;
    // The first step's kind stands: a claude result does not know whether its call was a command.
    out[index] = { ...before, ...definedOf(step), kind: before.kind } as TranscriptStep;
  }
  return out;
}

/** `step` without its empty fields, so a result-only step keeps the call's command. */
function definedOf(step: TranscriptStep): Partial<TranscriptStep> {
  return Object.fromEntries(
    Object.entries(step).filter(([, v]) => v !== undefined && v !== ''),
  ) as Partial<TranscriptStep>;
}

/** The object fields of `value`, or an empty record. */
export function recordOf(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/** `value` when it is a string, else undefined. */
export function stringOf(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}
