/**
 * Two `baton ask` processes in one checkout: a blocker that holds it (a model turn that runs
 * `sleep 600`) and a second task queued behind it. For the terminal-queue tests, with and beside
 * the service.
 */
import { execa } from 'execa';
import type { FakeOpenAI, RecordedRequest } from '../fakes/fake-openai.js';
import { CLI, reapOnTestEnd, type CliHome } from './cli.js';

/** A `baton ask` running in the background, its stdout so far in `out()`. */
export interface RunningAsk {
  child: ReturnType<typeof spawnAsk>;
  out(): string;
}

/**
 * Answers every task with "done" except one whose text contains `blockerWord`, which sleeps until
 * cancelled: codex hands a command back to the model once its yield time (30 s at most) has
 * passed, so each of the blocker's turns gets another sleep. Answering its command's output with
 * "done" ended the blocker 30 s after it started, which freed the checkout under a test that had
 * not yet queued behind it.
 */
export function blockOn(model: FakeOpenAI, blockerWord: string): void {
  model.setFallback((request: RecordedRequest) =>
    JSON.stringify(request.body).includes(blockerWord)
      ? { kind: 'tool_call', name: 'exec_command', arguments: { cmd: 'sleep 600', yield_time_ms: 30_000 } }
      : { kind: 'message', text: 'done' },
  );
}

/** Starts `baton ask ARGS…` in the checkout, killed (and its group) when the test ends. */
export function startAsk(home: CliHome, args: readonly string[]): RunningAsk {
  const child = spawnAsk(home, args);
  reapOnTestEnd(child, child);
  let out = '';
  child.stdout?.on('data', (c: Buffer) => (out += c.toString()));
  return { child, out: () => out };
}

function spawnAsk(home: CliHome, args: readonly string[]) {
  return execa(process.execPath, [CLI, 'ask', ...args], {
    env: home.env,
    extendEnv: false,
    cwd: home.repo,
    reject: false,
    stdin: 'ignore',
  });
}

/** Resolves once `predicate` holds (a condition, polled; no deadline but the test's). */
export async function until(predicate: () => boolean | Promise<boolean>, signal: AbortSignal): Promise<void> {
  while (!signal.aborted) {
    if (await predicate()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('the test ended before the condition was reached');
}

/** The first `[run hr_…]` id in `text`. */
export const firstRunId = (text: string): string | undefined => /\[run (hr_[0-9a-f]{12})\]/.exec(text)?.[1];
