/**
 * `baton ask [--vendor V] [--cwd DIR] [--progress] [--json] TASK`: the terminal channel
 * (PRODUCT.md §12). The same dispatcher as chat, with owner trust; prints `started`, progress if
 * asked, and the outcome; exits 0 only when the run completed.
 */
import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { TerminalAdapter } from '../channels/terminal/adapter.js';
import { systemClock } from '../core/clock.js';
import { BatonError } from '../core/errors.js';
import type { RunId } from '../core/ids.js';
import { createLogger } from '../core/logger.js';
import type { ServiceInputs } from '../main.js';
import { buildRuntime } from '../runtime.js';

/** Usage text of `baton ask`. */
export const ASK_USAGE = 'Usage: baton ask [--vendor codex|claude] [--cwd DIR] [--progress] [--json] TASK';

function parseAskArgs(argv: readonly string[]) {
  try {
    return parseArgs({
      args: [...argv],
      options: {
        vendor: { type: 'string' },
        cwd: { type: 'string' },
        progress: { type: 'boolean', default: false },
        json: { type: 'boolean', default: false },
      },
      allowPositionals: true,
      strict: true,
    });
  } catch (err) {
    throw new BatonError('usage', `${err instanceof Error ? err.message : String(err)}. ${ASK_USAGE}`, { cause: err });
  }
}

/** Exit codes of `baton ask`. */
export const ASK_EXIT = { completed: 0, failed: 1, refused: 2, interrupted: 130 } as const;

/**
 * Runs one task to its end.
 *
 * @returns the process exit code.
 * @throws BatonError `usage` for bad arguments; storage errors from opening the database.
 */
export async function ask(argv: readonly string[], inputs: ServiceInputs, out: (line: string) => void = (l) => process.stdout.write(`${l}\n`)): Promise<number> {
  const { values, positionals } = parseAskArgs(argv);
  const task = positionals.join(' ').trim();
  if (!task) throw new BatonError('usage', `A task is required. ${ASK_USAGE}`);
  if (values.vendor !== undefined && values.vendor !== 'codex' && values.vendor !== 'claude') {
    throw new BatonError('usage', `--vendor must be codex or claude, not "${values.vendor}". ${ASK_USAGE}`);
  }

  const messages: string[] = [];
  const logger = createLogger({ level: inputs.env.logLevel === 'info' ? 'warn' : inputs.env.logLevel, destination: process.stderr as never });
  const runtime = await buildRuntime({ ...inputs, clock: systemClock, logger, configPerCommand: true });
  runtime.adapters.set('terminal', new TerminalAdapter((text) => (values.json ? messages.push(text) : out(text))));
  let runId: RunId | undefined;
  let stopRequested = false;
  const onSignal = (): void => {
    stopRequested = true;
    if (runId) void runtime.supervisor.cancel(runId, 'owner_cancel');
  };
  // Ctrl-C, a closed terminal (SIGHUP) and SIGTERM all cancel the run: its CLI lives in a
  // process group of its own and would otherwise outlive `baton ask`, holding the worktree.
  const signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
  for (const signal of signals) process.on(signal, onSignal);
  try {
    // The terminal's natural directory is the one baton ask runs in.
    const cwd = resolve(values.cwd ?? process.cwd());
    if (cwd.includes('"')) throw new BatonError('usage', `The directory ${cwd} contains a double quote, which the command grammar cannot carry.`);
    const words = [`/${values.vendor ?? 'run'}`, `in:"${cwd}"`, values.progress ? 'progress' : '', task];
    const result = await runtime.dispatcher.handle({
      platform: 'terminal',
      dedupeKey: randomUUID(),
      chatId: 'terminal',
      isDirect: true,
      messageId: 'ask',
      senderId: 'owner',
      senderName: 'terminal',
      senderIsBot: false,
      text: words.filter(Boolean).join(' '),
      receivedAt: systemClock.now(),
    });
    if (result.kind !== 'launched') {
      if (values.json) out(JSON.stringify({ status: 'refused', code: result.kind === 'refused' ? result.code : result.kind, messages }));
      return ASK_EXIT.refused;
    }
    runId = result.runId;
    // A signal that arrived while the run was being launched cancels it now.
    if (stopRequested) void runtime.supervisor.cancel(runId, 'owner_cancel');
    await runtime.supervisor.idle();
    const run = await runtime.store.getRun(runId);
    if (values.json) {
      out(JSON.stringify({
        runId,
        status: run?.status,
        reason: run?.reason ?? null,
        vendor: run?.vendor,
        cwd: run?.cwd,
        finalMessage: run?.finalMessage ?? null,
        errorMessage: run?.errorMessage ?? null,
        usage: run?.usage ?? null,
        messages,
      }));
    }
    if (run?.status === 'completed') return ASK_EXIT.completed;
    return run?.status === 'cancelled' ? ASK_EXIT.interrupted : ASK_EXIT.failed;
  } finally {
    for (const signal of signals) process.off(signal, onSignal);
    await runtime.supervisor.shutdown();
    await runtime.database.close();
  }
}
