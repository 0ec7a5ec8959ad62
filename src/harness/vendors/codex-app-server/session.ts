/**
 * One run of `codex app-server` over its stdio: `initialize` → `initialized` → `thread/start`
 * (or `thread/resume` for a reply) as soon as the server is spawned, then `turn/start` with the
 * task once the run releases it, and stdin closed once the turn has ended (the server exits on
 * EOF: measured on codex-cli 0.171.0, exit 0 about 30 ms later). The live turn can be steered
 * (`turn/steer`) and interrupted (`turn/interrupt`) while it runs.
 */
import type { SessionIo, VendorSession } from '../types.js';
import type { ThreadResumeParams } from './protocol/v2/ThreadResumeParams.js';
import type { ThreadStartParams } from './protocol/v2/ThreadStartParams.js';
import type { TurnInterruptParams } from './protocol/v2/TurnInterruptParams.js';
import type { TurnStartParams } from './protocol/v2/TurnStartParams.js';
import type { TurnSteerParams } from './protocol/v2/TurnSteerParams.js';
import type { UserInput } from './protocol/v2/UserInput.js';
import type { InitializeParams } from './protocol/InitializeParams.js';
import { approvalAnswer, approvalAsk, APPROVAL_METHODS } from './approvals.js';
import type { FileUpdateChange } from './protocol/v2/FileUpdateChange.js';
import type { ThreadItem } from './protocol/v2/ThreadItem.js';
import { RpcPeer, type ServerRequest } from './rpc.js';

/** Patches remembered for their approval request (the oldest goes first). */
const MAX_PATCHES_KEPT = 100;

/** What baton tells the server it is (`initialize.clientInfo`; codex puts it in its user agent). */
const CLIENT_INFO: InitializeParams['clientInfo'] = { name: 'baton', title: 'baton', version: '1' };

/** The part of a thread/start or thread/resume answer the session reads. */
interface ThreadAnswer {
  thread?: { id?: unknown };
}
/** The part of a turn/start answer the session reads. */
interface TurnAnswer {
  turn?: { id?: unknown };
}

/** A codex app-server session; see the module comment. */
export class CodexAppServerSession implements VendorSession {
  private readonly rpc: RpcPeer;
  private readonly thread: Promise<string>;
  private threadId: string | undefined;
  private turnId: string | undefined;
  private turnEnded = false;
  private readonly patches = new Map<string, readonly FileUpdateChange[]>();
  private ended = false;

  /** Opens the connection at once: the handshake overlaps the run's launch snapshot. */
  constructor(private readonly io: SessionIo) {
    this.rpc = new RpcPeer(
      (line) => io.write(`${line}\n`),
      (request) => this.serve(request),
    );
    this.thread = this.handshake();
    // A refused handshake is in the stream already (the reducer reads the error answer); the
    // session only ends the connection so the server exits.
    this.thread.catch((err: unknown) => this.fail(err));
  }

  /** Starts the turn with the task; images go as `localImage` items beside the text. */
  sendTask(task: string): void {
    void this.thread
      .then(async (threadId) => {
        const input: UserInput[] = [{ type: 'text', text: task, text_elements: [] }];
        for (const image of this.io.request.images ?? []) input.push({ type: 'localImage', path: image.path });
        const params: TurnStartParams = { threadId, input };
        const answer = await this.rpc.request<TurnAnswer>('turn/start', params, true);
        if (typeof answer.turn?.id === 'string') this.turnId ??= answer.turn.id;
      })
      .catch((err: unknown) => this.fail(err));
  }

  /** Reads one parsed line of the server's stdout. */
  receive(message: unknown): void {
    this.rpc.receive(message);
    const m = message as { method?: unknown; params?: { turn?: { id?: unknown } } } | null;
    if (typeof m?.method !== 'string') return;
    if (m.method === 'turn/started' && typeof m.params?.turn?.id === 'string') this.turnId = m.params.turn.id;
    else if (m.method === 'item/started') this.notePatch((m.params as { item?: ThreadItem } | undefined)?.item);
    else if (m.method === 'turn/completed') {
      this.turnEnded = true;
      this.end();
    }
  }

  /**
   * Adds the owner's words to the running turn (`turn/steer`, held to the turn it was meant for).
   *
   * @throws Error when no turn runs; RpcRequestFailed when codex refuses (the turn ended meanwhile).
   */
  async steer(text: string): Promise<void> {
    const { threadId, turnId } = this.liveTurn('steer');
    const params: TurnSteerParams = {
      threadId,
      expectedTurnId: turnId,
      input: [{ type: 'text', text, text_elements: [] }],
    };
    await this.rpc.request('turn/steer', params);
  }

  /**
   * Asks codex to stop the running turn (`turn/interrupt`); the turn then completes as `interrupted`.
   *
   * @throws Error when no turn runs; RpcRequestFailed when codex refuses.
   */
  async interrupt(): Promise<void> {
    const { threadId, turnId } = this.liveTurn('interrupt');
    const params: TurnInterruptParams = { threadId, turnId };
    await this.rpc.request('turn/interrupt', params);
  }

  /** The server's stdout ended: whatever still waits for an answer fails. */
  closed(): void {
    this.ended = true;
    this.rpc.close();
  }

  private async handshake(): Promise<string> {
    const params: InitializeParams = { clientInfo: CLIENT_INFO, capabilities: null };
    await this.rpc.request('initialize', params, true);
    this.rpc.notify('initialized');
    const [method, threadParams] = this.threadRequest();
    const answer = await this.rpc.request<ThreadAnswer>(method, threadParams, true);
    const id = answer.thread?.id;
    if (typeof id !== 'string') throw new Error('codex app-server answered without a thread id');
    this.threadId = id;
    return id;
  }

  /** thread/start, or thread/resume of the session a reply continues, with the run's posture and model. */
  private threadRequest(): ['thread/start', ThreadStartParams] | ['thread/resume', ThreadResumeParams] {
    const { request, cwd, approvals } = this.io;
    const common = {
      cwd,
      // `codex exec` never asks (it runs with approval policy "never"); a run with approvals is
      // asked about every command codex does not know to be read-only, and every patch.
      approvalPolicy: approvals ? 'untrusted' : 'never',
      ...(request.model ? { model: request.model } : {}),
      ...(request.posture ? { sandbox: request.posture as NonNullable<ThreadStartParams['sandbox']> } : {}),
    } satisfies ThreadStartParams;
    return request.resumeSessionId
      ? ['thread/resume', { threadId: request.resumeSessionId, ...common, excludeTurns: true }]
      : ['thread/start', common];
  }

  /** Keeps a patch's changes until its approval request, which names only the item. */
  private notePatch(item: ThreadItem | undefined): void {
    if (item?.type !== 'fileChange' || !this.io.approvals) return;
    if (this.patches.size >= MAX_PATCHES_KEPT) this.patches.delete(this.patches.keys().next().value!);
    this.patches.set(item.id, item.changes);
  }

  private liveTurn(what: string): { threadId: string; turnId: string } {
    if (this.threadId === undefined || this.turnId === undefined || this.turnEnded || this.ended)
      throw new Error(`no codex turn is running to ${what}`);
    return { threadId: this.threadId, turnId: this.turnId };
  }

  /** An approval request goes to the owner; any other request is refused (see RpcPeer). */
  private serve(request: ServerRequest): Promise<unknown> | undefined {
    const { approvals } = this.io;
    if (!approvals || !APPROVAL_METHODS.has(request.method)) return undefined;
    const ask = approvalAsk(request, this.patches, this.io.cwd);
    return approvals.ask(ask).then((allow) => approvalAnswer(request, allow));
  }

  private fail(err: unknown): void {
    this.io.onError(err);
    this.end();
  }

  /** Closes the server's stdin, once: it exits on EOF. */
  private end(): void {
    if (this.ended) return;
    this.ended = true;
    this.io.end();
  }
}
