/**
 * `baton ask [--vendor V] [--cwd DIR] [--file FILE]... [--progress] [--json] TASK`: the terminal channel.
 * The same dispatcher as chat, with owner trust; prints `started`, progress if
 * asked, and the outcome; exits 0 only when the run completed.
 */
import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { TerminalAdapter } from '../channels/terminal/adapter.js';
import { localAttachment } from '../channels/terminal/local-file.js';
import { systemClock } from '../core/clock.js';
import { BatonError } from '../core/errors.js';
import type { RunId } from '../core/ids.js';
import { createLogger } from '../core/logger.js';
import { secretValues } from '../config/index.js';
import type { ServiceInputs } from '../main.js';
import { buildRuntime } from '../runtime.js';
import { readServiceState, startHealthServer, type HealthServer } from '../health.js';
import { databaseIsShared } from '../store/embedded-postgres.js';
import { didYouMean } from './suggest.js';
import { followText, waitForTurn } from './ask-queue.js';
import type { RunRow } from '../store/schema.js';

/** Usage text of `baton ask`. */
export const ASK_USAGE =
  'Usage: baton ask [--vendor codex|claude] [--cwd DIR] [--file FILE]... [--progress] [--json] [--no-wait] TASK';

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
        'no-wait': { type: 'boolean', default: false },
      },
      allowPositionals: true,
      strict: true,
    });
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    // node:util's parseArgs says "Unknown option '--vendr'. …"; name the option it was close to.
    const given = /Unknown option '([^']+)'/.exec(message)?.[1];
    const hint =
      given === undefined
        ? ''
        : didYouMean(given, ['--vendor', '--cwd', '--file', '--progress', '--json', '--no-wait']);
    throw new BatonError('usage', `${message}.${hint} ${ASK_USAGE}`, { cause: err });
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
export async function ask(
  argv: readonly string[],
  inputs: ServiceInputs,
  out: (line: string) => void = (l) => process.stdout.write(`${l}\n`),
): Promise<number> {
  const { values, positionals } = parseAskArgs(argv);
  const task = positionals.join(' ').trim();
  if (!task) throw new BatonError('usage', `A task is required. ${ASK_USAGE}`);
  if (values.vendor !== undefined && values.vendor !== 'codex' && values.vendor !== 'claude') {
    throw new BatonError('usage', `--vendor must be codex or claude, not "${values.vendor}". ${ASK_USAGE}`);
  }

  // The terminal's natural directory is the one baton ask runs in.
  const cwd = resolve(values.cwd ?? process.cwd());
  if (cwd.includes('"'))
    throw new BatonError(
      'usage',
      `The directory ${cwd} contains a double quote, which the command grammar cannot carry.`,
    );
  const text = [`/${values.vendor ?? 'run'}`, `in:"${cwd}"`, values.progress ? 'progress' : '', task]
    .filter(Boolean)
    .join(' ');

  // With embedded PGlite a running service holds the database: the run goes through it.
  // Absolute, so the service (another process, maybe another working directory) finds them.
  const files = (values.file ?? []).map((file) => resolve(file));
  const viaService = await askViaService(
    inputs,
    text,
    files,
    (line) => (values.json ? undefined : out(line)),
    values['no-wait'],
  );
  if (viaService) {
    if (values.json) out(JSON.stringify(viaService));
    else if (viaService.follow !== undefined) out(viaService.follow);
    return viaService.status === 'refused'
      ? ASK_EXIT.refused
      : viaService.status === 'queued'
        ? ASK_EXIT.completed
        : exitOf(viaService.status);
  }

  const messages: string[] = [];
  const logger = createLogger({
    level: inputs.env.logLevel === 'info' ? 'warn' : inputs.env.logLevel,
    destination: process.stderr as never,
    secrets: secretValues(inputs.env),
  });
  // Only the run this ask waits for: a queued run of someone else's would be left half started
  // when this process exits.
  const runtime = await buildRuntime({
    ...inputs,
    clock: systemClock,
    logger,
    configPerCommand: true,
    queueScope: 'own',
  });
  // Replies to owner commands from another terminal go back to that command, the rest is ours.
  const adminReplies = new Map<string, string[]>();
  const printed = new Set<string>();
  runtime.adapters.set(
    'terminal',
    new TerminalAdapter((reply, chatId) => {
      const replies = adminReplies.get(chatId);
      if (replies) return void replies.push(reply);
      printed.add(reply);
      if (values.json) messages.push(reply);
      else out(reply);
    }),
  );
  // `baton cancel ID`, `baton stop` and chat /stop from another process reach this run through
  // the database, like a run of the service. Embedded PGlite is held by this process alone (no
  // service runs, or the run would have gone through it), so there `baton runs|cancel|stop` are
  // served here, as the service serves them; with PostgreSQL they reach the database themselves.
  runtime.supervisor.watchCancelRequests();
  let admin: HealthServer | undefined;
  let runId: RunId | undefined;
  let stopRequested = false;
  const onSignal = (): void => {
    stopRequested = true;
    // Queued or active, here or in the service that took it: cancelled as /cancel would.
    if (runId)
      void runtime.dispatcher
        .cancelOwn(runId)
        .catch((err: unknown) => logger.warn({ err, runId }, 'could not cancel the run'));
  };
  // Ctrl-C, a closed terminal (SIGHUP) and SIGTERM all cancel the run: its CLI lives in a
  // process group of its own and would otherwise outlive `baton ask`, holding the worktree.
  const signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
  for (const signal of signals) process.on(signal, onSignal);
  try {
    // Only with PGlite, which this process alone holds (no service runs: the ask would have gone
    // through it). With PostgreSQL (DATABASE_URL or embedded) a service may run beside this ask,
    // and its service.json must stay the one doctor and the approval servers find.
    if (runtime.database.kind.engine === 'pglite')
      admin = await startHealthServer({
        port: 0,
        batonHome: inputs.batonHome,
        host: runtime.host,
        startedAt: systemClock.now(),
        report: () =>
          Promise.reject(
            new BatonError('usage', 'baton ask answers owner commands only; run baton doctor for a report.'),
          ),
        admin: async (command) => {
          const chatId = `admin-${randomUUID()}`;
          adminReplies.set(chatId, []);
          try {
            await runtime.dispatcher.handle({
              platform: 'terminal',
              dedupeKey: chatId,
              chatId,
              isDirect: true,
              messageId: chatId,
              senderId: 'owner',
              senderName: 'baton CLI',
              senderIsBot: false,
              text: command,
              receivedAt: systemClock.now(),
            });
            return adminReplies.get(chatId) ?? [];
          } finally {
            adminReplies.delete(chatId);
          }
        },
        logger,
      });
    const result = await runtime.dispatcher.handle({
      platform: 'terminal',
      dedupeKey: randomUUID(),
      chatId: 'terminal',
      isDirect: true,
      messageId: 'ask',
      senderId: 'owner',
      senderName: 'terminal',
      senderIsBot: false,
      text,
      ...(files.length > 0 ? { attachments: files.map(localAttachment) } : {}),
      receivedAt: systemClock.now(),
    });
    if (result.kind !== 'launched') {
      if (values.json)
        out(
          JSON.stringify({ status: 'refused', code: result.kind === 'refused' ? result.code : result.kind, messages }),
        );
      return ASK_EXIT.refused;
    }
    runId = result.runId;
    const launched = runId;
    // A signal that arrived while the run was being launched cancels it now.
    if (stopRequested) onSignal();
    if ((await runtime.store.runs.getRun(runId))?.status === 'queued') {
      if (values['no-wait']) {
        const line = followText(runId, Boolean(await readServiceState(inputs.batonHome)));
        if (values.json) out(JSON.stringify({ runId, status: 'queued', follow: line, messages }));
        else out(line);
        return ASK_EXIT.completed;
      }
      if (!values.json) out(`Waiting for its turn; Ctrl-C drops it.`);
      await waitForTurn(runtime, runId, printed, (line) => void (values.json ? messages.push(line) : out(line)));
    }
    await runtime.supervisor.idle();
    const run = await runtime.store.runs.getRun(launched);
    const report = askReport(launched, run, messages);
    if (values.json) out(JSON.stringify(report));
    return exitOf(report.status);
  } finally {
    for (const signal of signals) process.off(signal, onSignal);
    await admin?.close();
    await runtime.supervisor.shutdown();
    await runtime.database.close();
  }
}

/** What `baton ask --json` prints for a run that launched (and, via the service, for a refusal). */
export interface AskReport {
  runId?: string;
  status: string | undefined;
  code?: string;
  reason?: string | null;
  vendor?: string | undefined;
  cwd?: string | undefined;
  finalMessage?: string | null;
  errorMessage?: string | null;
  usage?: unknown;
  /** Tool calls the CLI denied (claude). */
  denials?: unknown[];
  /** With `--no-wait`, for a queued run: how to follow it. */
  follow?: string;
  messages: string[];
}

/** The `--json` report of a finished run. */
export function askReport(runId: RunId, run: RunRow | undefined, messages: string[]): AskReport {
  return {
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
  };
}

function exitOf(status: string | undefined): number {
  if (status === 'completed') return ASK_EXIT.completed;
  return status === 'cancelled' ? ASK_EXIT.interrupted : ASK_EXIT.failed;
}

/**
 * Runs the task through the running service (`POST /admin/ask` on its local port, with the token
 * from the 0600 `service.json`) when the database is embedded PGlite, which only one process may
 * open (embedded PostgreSQL, like `DATABASE_URL`, is opened by `baton ask` itself). The service streams each message as a JSON line, then the report. A signal (Ctrl-C, a
 * closed terminal) closes the request, and the service cancels the run.
 *
 * @returns the report, or undefined with PostgreSQL (through `DATABASE_URL` or embedded) or when
 *   no service answers (then `baton ask` opens the database itself).
 */
async function askViaService(
  inputs: ServiceInputs,
  text: string,
  files: readonly string[],
  print: (line: string) => void,
  noWait: boolean,
): Promise<AskReport | undefined> {
  if (await databaseIsShared(inputs.env.databaseUrl, inputs.batonHome)) return undefined;
  const state = await readServiceState(inputs.batonHome);
  if (!state) return undefined;
  const abort = new AbortController();
  const onSignal = (): void => abort.abort();
  const signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
  let response: Response;
  try {
    response = await fetch(`http://127.0.0.1:${state.port}/admin/ask`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${state.adminToken}`,
        'content-type': 'application/json',
        ...(noWait ? { 'x-baton-no-wait': '1' } : {}),
      },
      body: JSON.stringify({ text, files }),
      signal: abort.signal,
    });
  } catch {
    return undefined; // a stale service.json: no service is running
  }
  if (!response.ok || !response.body) return undefined;
  for (const signal of signals) process.on(signal, onSignal);
  const messages: string[] = [];
  let report: AskReport | undefined;
  let cancelled = false;
  try {
    let buffered = '';
    const decoder = new TextDecoder();
    try {
      for await (const chunk of response.body) {
        buffered += decoder.decode(chunk as Uint8Array, { stream: true });
        let newline: number;
        while ((newline = buffered.indexOf('\n')) >= 0) {
          const line = buffered.slice(0, newline);
          buffered = buffered.slice(newline + 1);
          if (!line) continue;
          const event = JSON.parse(line) as { message?: string; report?: AskReport };
          if (event.message !== undefined) {
            messages.push(event.message);
            print(event.message);
          }
          if (event.report) report = event.report;
        }
      }
    } catch (err) {
      if (!abort.signal.aborted) throw err;
      cancelled = true;
    }
  } finally {
    for (const signal of signals) process.off(signal, onSignal);
  }
  if (cancelled) return { status: 'cancelled', messages };
  if (!report)
    throw new BatonError(
      'database_unavailable',
      'The running baton service ended the request without an outcome; see its log.',
    );
  return { ...report, messages };
}
