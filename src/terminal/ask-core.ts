/** What a `baton ask` that runs its task itself uses of the core main's wiring builds. */
import type { ChannelAdapter, Platform } from '../channels/types.js';
import type { Logger } from '../core/logger.js';
import type { RunId } from '../core/ids.js';
import type { DispatchResult } from '../dispatch/dispatcher.js';
import type { InboundMessage } from '../channels/types.js';
import type { RunSupervisor } from '../harness/supervisor.js';
import type { Database } from '../store/database.js';
import type { RunStore } from '../store/runs-repo.js';

/** The core `baton ask` runs its task on when no service carries it: what main's wiring builds. */
export interface AskCore {
  store: { runs: Pick<RunStore['runs'], 'getRun'>; outbox: Pick<RunStore['outbox'], 'deliveriesOfRun'> };
  database: Pick<Database, 'kind' | 'close'>;
  dispatcher: {
    handle(message: InboundMessage): Promise<DispatchResult>;
    cancelOwn(runId: RunId): Promise<string>;
    waitFor(runId: RunId, waits?: boolean): void;
    startQueued(): Promise<void>;
  };
  supervisor: Pick<RunSupervisor, 'watchCancelRequests' | 'idle' | 'shutdown' | 'supervisorId'>;
  /** Adapters the outbox sends through; the terminal's is added here. */
  adapters: Map<Platform, ChannelAdapter>;
  host: string;
}

/**
 * Opens the database and builds the core for one ask (main's entry point: only main may use the
 * wiring).
 *
 * @throws BatonError `database_unavailable`, `migration_failed`.
 */
export type OpenAskCore = (logger: Logger) => Promise<AskCore>;
