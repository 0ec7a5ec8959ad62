/**
 * Every request body the fake platforms and model servers of this test process received, so the
 * shared end-to-end support can check that no secret baton holds was ever sent to one (see
 * test/support/canaries.ts). Bodies only: the credentials a request carries by design (a bot
 * token in a Bot API path, an `Authorization` header) are not recorded.
 */

/** One received body. */
export interface ReceivedBody {
  /** Which fake received it, e.g. `telegram sendMessage`. */
  source: string;
  body: Buffer;
}

/** Bytes kept at most; older bodies are dropped first (the memory of a long test file stays bounded). */
const KEEP_BYTES = 64 * 1024 * 1024;

const bodies: ReceivedBody[] = [];
let keptBytes = 0;

/** Records a body a fake received. */
export function recordReceived(source: string, body: Buffer | string): void {
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  bodies.push({ source, body: bytes });
  keptBytes += bytes.length;
  while (keptBytes > KEEP_BYTES && bodies.length > 1) keptBytes -= bodies.shift()!.body.length;
}

/** The bodies received so far in this process, oldest first. */
export function receivedBodies(): readonly ReceivedBody[] {
  return bodies;
}
