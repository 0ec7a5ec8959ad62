/** What the web console is handed by the wiring (see console.ts). */
import type { Logger } from '../../core/logger.js';
import type { TranscriptReader } from '../../harness/vendors/transcript.js';
import type { Db } from '../../store/database-types.js';

/** What the console reads and does, handed in by the wiring. */
export interface ConsoleDeps {
  db: Db;
  batonHome: string;
  nowMs: () => number;
  /** The transcript reader of a vendor (its module's `transcript`), or undefined. */
  transcriptOf: (vendor: string) => TranscriptReader | undefined;
  /** `/redeliver ID`, as the chat command does it; resolves with its answer. */
  redeliver: (deliveryId: string) => Promise<string>;
  /** An approval card's button press; resolves with the presser's answer. Absent: no approvals on this node. */
  answerApproval?: (approvalId: number, decision: 'allow' | 'allow_run' | 'deny', decidedBy: string) => Promise<string>;
  /** `LISTEN` of the database, when it has one. */
  listen?: (channel: string, onNotify: (payload: string) => void) => Promise<() => Promise<void>>;
  /** `host:port` names the console answers under beside the loopback ones (from `[console] listen`). */
  extraHosts?: readonly string[];
  logger: Logger;
}
