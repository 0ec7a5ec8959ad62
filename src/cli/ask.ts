/**
 * `baton ask [--vendor V] [--cwd DIR] [--file FILE]... [--progress] [--json] TASK`: the terminal channel.
 * The same dispatcher as chat, with owner trust; prints `started`, progress if
 * asked, and the outcome; exits 0 only when the run completed.
 */
import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { localAttachment } from '../channels/terminal/local-file.js';
import type { ServiceInputs } from '../config/service-inputs.js';
import { secretValues } from '../config/index.js';
import { systemClock } from '../core/clock.js';
import { BatonError } from '../core/errors.js';
import type { RunId } from '../core/ids.js';
import { createLogger, type Logger } from '../core/logger.js';
import { startControlApi, type ControlApi } from '../service/control-api/server.js';
import { readServiceState } from '../service/control-api/service-state.js';
import { databaseIsShared } from '../store/embedded-postgres.js';
import type { AskCore, OpenAskCore } from '../terminal/ask-core.js';
import { askReport, type AskReport } from '../terminal/ask-report.js';
import { TerminalConversations, terminalMessage } from '../terminal/conversations.js';
import { followText, WAITING_FOR_TURN_TEXT } from '../wording/ask.js';
import { didYouMean } from '../wording/suggest.js';
import { waitForTurn } from './ask-queue.js';

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

/** A parsed `baton ask`: the command text for the dispatcher and how to print. */
interface AskRequest {
  text: string;
  /** Absolute, so the service (another process, maybe another working directory) finds them. */
  files: string[];
  json: boolean;
  noWait: boolean;
}

/**
 * Runs one task to its end.
 *
 * @returns the process exit code.
 * @throws BatonError `usage` for bad arguments; storage errors from opening the database.
 */
export async function ask(
  argv: readonly string[],
  inputs: ServiceInputs,
  openCore: OpenAskCore,
  out: (line: string) => void = (l) => process.stdout.write(`${l}\n`),
): Promise<number> {
  const request = askRequest(argv);
  // With embedded PGlite a running service holds the database: the run goes through it.
  const viaService = await askViaService(
    inputs,
    request.text,
    request.files,
    (line) => (request.json ? undefined : out(line)),
    request.noWait,
  );
  if (viaService) {
    if (request.json) out(JSON.stringify(viaService));
    else if (viaService.follow !== undefined) out(viaService.follow);
    return viaService.status === 'refused'
      ? ASK_EXIT.refused
      : viaService.status === 'queued'
        ? ASK_EXIT.completed
        : exitOf(viaService.status);
  }
  return askHere(request, inputs, openCore, out);
}

/**
 * The command text of `baton ask`'s arguments.
 *
 * @throws BatonError `usage` for bad arguments.
 */
function askRequest(argv: readonly string[]): AskRequest {
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
  const files = (values.file ?? []).map((file) => resolve(file));
  return { text, files, json: values.json, noWait: values['no-wait'] };
}

/** Runs the task in this process: opens the database, launches the run and sees it through. */
async function askHere(
  request: AskRequest,
  inputs: ServiceInputs,
  openCore: OpenAskCore,
  out: (line: string) => void,
): Promise<number> {
  const messages: string[] = [];
  const logger = createLogger({
    level: inputs.env.logLevel === 'info' ? 'warn' : inputs.env.logLevel,
    destination: process.stderr as never,
    secrets: secretValues(inputs.env),
  });
  const core = await openCore(logger);
  // Replies to owner commands from another terminal go back to that command, the rest is ours.
  const printed = new Set<string>();
  const conversations = new TerminalConversations((reply) => {
    printed.add(reply);
    if (request.json) messages.push(reply);
    else out(reply);
  });
  core.adapters.set('terminal', conversations.adapter);
  // `baton cancel ID`, `baton stop` and chat /stop from another process reach this run through
  // the database, like a run of the service. Embedded PGlite is held by this process alone (no
  // service runs, or the run would have gone through it), so there `baton runs|cancel|stop` are
  // served here, as the service serves them; with PostgreSQL they reach the database themselves.
  core.supervisor.watchCancelRequests();
  let admin: ControlApi | undefined;
  let runId: RunId | undefined;
  let stopRequested = false;
  const onSignal = (): void => {
    stopRequested = true;
    // Queued or active, here or in the service that took it: cancelled as /cancel would.
    if (runId)
      void core.dispatcher
        .cancelOwn(runId)
        .catch((err: unknown) => logger.warn({ err, runId }, 'could not cancel the run'));
  };
  // Ctrl-C, a closed terminal (SIGHUP) and SIGTERM all cancel the run: its CLI lives in a
  // process group of its own and would otherwise outlive `baton ask`, holding the worktree.
  for (const signal of ASK_SIGNALS) process.on(signal, onSignal);
  try {
    // Only with PGlite, which this process alone holds (no service runs: the ask would have gone
    // through it). With PostgreSQL (DATABASE_URL or embedded) a service may run beside this ask,
    // and its service.json must stay the one doctor and the approval servers find.
    if (core.database.kind.engine === 'pglite') admin = await serveOwnerCommands(core, conversations, inputs, logger);
    const result = await core.dispatcher.handle(
      terminalMessage({
        dedupeKey: randomUUID(),
        chatId: 'terminal',
        messageId: 'ask',
        senderName: 'terminal',
        text: request.text,
        ...(request.files.length > 0 ? { attachments: request.files.map(localAttachment) } : {}),
        receivedAt: systemClock.now(),
      }),
    );
    if (result.kind !== 'launched') {
      if (request.json)
        out(
          JSON.stringify({ status: 'refused', code: result.kind === 'refused' ? result.code : result.kind, messages }),
        );
      return ASK_EXIT.refused;
    }
    runId = result.runId;
    // A signal that arrived while the run was being launched cancels it now.
    if (stopRequested) onSignal();
    return await seeRunThrough(core, runId, { request, inputs, printed, messages, out });
  } finally {
    for (const signal of ASK_SIGNALS) process.off(signal, onSignal);
    await admin?.close();
    await core.supervisor.shutdown();
    await core.database.close();
  }
}

/** Signals that cancel the run of a `baton ask`. */
const ASK_SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/**
 * Serves `baton runs|cancel|stop` of other terminals on a control API of this process (embedded
 * PGlite keeps the database to it); it reports no doctor data.
 */
function serveOwnerCommands(
  core: AskCore,
  conversations: TerminalConversations,
  inputs: ServiceInputs,
  logger: Logger,
): Promise<ControlApi> {
  return startControlApi({
    port: 0,
    batonHome: inputs.batonHome,
    host: core.host,
    startedAt: systemClock.now(),
    report: () =>
      Promise.reject(new BatonError('usage', 'baton ask answers owner commands only; run baton doctor for a report.')),
    admin: (command) => conversations.runOwnerCommand(core.dispatcher, command, () => systemClock.now()),
    logger,
  });
}

/** Waits for a launched run (its turn first, when queued) and reports its outcome; returns the exit code. */
async function seeRunThrough(
  core: AskCore,
  runId: RunId,
  ctx: {
    request: AskRequest;
    inputs: ServiceInputs;
    printed: ReadonlySet<string>;
    messages: string[];
    out: (line: string) => void;
  },
): Promise<number> {
  const { request, messages, out } = ctx;
  if ((await core.store.runs.getRun(runId))?.status === 'queued') {
    if (request.noWait) {
      const line = followText(runId, Boolean(await readServiceState(ctx.inputs.batonHome)));
      if (request.json) out(JSON.stringify({ runId, status: 'queued', follow: line, messages }));
      else out(line);
      return ASK_EXIT.completed;
    }
    if (!request.json) out(WAITING_FOR_TURN_TEXT);
    await waitForTurn(core, runId, ctx.printed, (line) => void (request.json ? messages.push(line) : out(line)));
  }
  await core.supervisor.idle();
  const run = await core.store.runs.getRun(runId);
  const report = askReport(runId, run, messages);
  if (request.json) out(JSON.stringify(report));
  return exitOf(report.status);
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
  if (await databaseIsShared(inputs.env.databaseUrl, inputs.batonHome, inputs.rawEnv.PATH)) return undefined;
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
