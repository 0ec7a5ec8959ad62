/**
 * `baton ask [--vendor V] [--cwd DIR] [--progress] [--json] TASK`: the terminal channel
 * (PRODUCT.md §12). The same dispatcher as chat, with owner trust; prints `started`, progress if
 * asked, and the outcome; exits 0 only when the run completed.
 */
import { randomUUID } from 'node:crypto';
import { open } from 'node:fs/promises';
import { basename, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { TerminalAdapter } from '../channels/terminal/adapter.js';
import type { IncomingAttachment } from '../channels/types.js';
import { systemClock } from '../core/clock.js';
import { BatonError } from '../core/errors.js';
import type { RunId } from '../core/ids.js';
import { createLogger } from '../core/logger.js';
import type { ServiceInputs } from '../main.js';
import { startHealthServer, type HealthServer } from '../health.js';
import { buildRuntime } from '../runtime.js';

/** Usage text of `baton ask`. */
export const ASK_USAGE = 'Usage: baton ask [--vendor codex|claude] [--cwd DIR] [--file FILE]... [--progress] [--json] TASK';

function parseAskArgs(argv: readonly string[]) {
  try {
    return parseArgs({
      args: [...argv],
      options: {
        vendor: { type: 'string' },
        cwd: { type: 'string' },
        file: { type: 'string', multiple: true },
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
  const runtime = await buildRuntime({ ...inputs, clock: systemClock, logger });
  // Replies to owner commands from another terminal go back to that command, the rest is ours.
  const adminReplies = new Map<string, string[]>();
  runtime.adapters.set('terminal', new TerminalAdapter((text, chatId) => {
    const replies = adminReplies.get(chatId);
    if (replies) replies.push(text);
    else if (values.json) messages.push(text);
    else out(text);
  }));
  // `baton cancel ID`, `baton stop` and chat /stop from another process reach this run through
  // the database, like a run of the service. Embedded PGlite is held by this process alone, so
  // there `baton runs|cancel|stop` are served here, as the service serves them.
  runtime.supervisor.watchCancelRequests();
  let admin: HealthServer | undefined;
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
    if (!inputs.env.databaseUrl) admin = await startHealthServer({
      port: 0,
      batonHome: inputs.batonHome,
      host: runtime.host,
      startedAt: systemClock.now(),
      report: () => Promise.reject(new BatonError('usage', 'baton ask answers owner commands only; run baton doctor for a report.')),
      admin: async (text) => {
        const chatId = `admin-${randomUUID()}`;
        adminReplies.set(chatId, []);
        try {
          await runtime.dispatcher.handle({
            platform: 'terminal', dedupeKey: chatId, chatId, isDirect: true, messageId: chatId,
            senderId: 'owner', senderName: 'baton CLI', senderIsBot: false, text, receivedAt: systemClock.now(),
          });
          return adminReplies.get(chatId) ?? [];
        } finally {
          adminReplies.delete(chatId);
        }
      },
      logger,
    });
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
      ...(values.file?.length ? { attachments: values.file.map(localAttachment) } : {}),
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
        denials: run?.denials ?? [],
        messages,
      }));
    }
    if (run?.status === 'completed') return ASK_EXIT.completed;
    return run?.status === 'cancelled' ? ASK_EXIT.interrupted : ASK_EXIT.failed;
  } finally {
    for (const signal of signals) process.off(signal, onSignal);
    await admin?.close();
    await runtime.supervisor.shutdown();
    await runtime.database.close();
  }
}

/**
 * A file named with `--file`, as an attachment of the task: an image the model sees, or a text
 * file made part of the task. Its name is what the owner typed.
 *
 * @throws Error from `open()` when the file cannot be read (the launch then refuses, naming it).
 */
function localAttachment(path: string): IncomingAttachment {
  return {
    name: basename(path),
    open: async () => (await open(resolve(path), 'r')).createReadStream(),
  };
}
