/**
 * Who listens on a 127.0.0.1 TCP port, read from Linux's `/proc/net/tcp` (proc(5): each socket's
 * `local_address` as hex `IP:PORT` with the IPv4 address in host byte order, state `0A` = LISTEN,
 * and the owning `uid`). The approval server (src/harness/approval-server.ts) uses it to send its
 * run's token only to a listener of its own user: after the service died, another local user could
 * bind the port it recorded in `service.json`.
 */
import { readFile } from 'node:fs/promises';

/** What {@link listenerOwner} found on a port. */
export type ListenerOwner =
  /** A socket in LISTEN on 127.0.0.1 (or 0.0.0.0) and this port, owned by `uid`. */
  | { kind: 'found'; uid: number }
  /** No IPv4 listener on the port. */
  | { kind: 'none' }
  /** `/proc/net/tcp` could not be read (not Linux, or /proc not mounted): no answer. */
  | { kind: 'unknown' };

const LOOPBACK = '0100007F';
const ANY = '00000000';
const LISTEN = '0A';

/**
 * The uid owning the IPv4 listener on 127.0.0.1:`port` or 0.0.0.0:`port` in `text` (the contents of
 * `/proc/net/tcp`), or undefined when there is none.
 *
 * @param port 1–65535.
 */
export function parseListenerUid(text: string, port: number): number | undefined {
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  for (const line of text.split('\n').slice(1)) {
    const fields = line.trim().split(/\s+/);
    // sl, local_address, rem_address, st, tx:rx, tr:when, retrnsmt, uid, …
    if (fields.length < 8) continue;
    const [address, localPort] = (fields[1] ?? '').split(':');
    if (localPort !== hexPort || fields[3] !== LISTEN || (address !== LOOPBACK && address !== ANY)) continue;
    const uid = Number(fields[7]);
    if (Number.isInteger(uid)) return uid;
  }
  return undefined;
}

/**
 * Who listens on 127.0.0.1:`port` now. Never throws: an unreadable `/proc/net/tcp` is `unknown`.
 *
 * @param port 1–65535.
 */
export async function listenerOwner(port: number): Promise<ListenerOwner> {
  let text: string;
  try {
    text = await readFile('/proc/net/tcp', 'utf8');
  } catch {
    return { kind: 'unknown' };
  }
  const uid = parseListenerUid(text, port);
  return uid === undefined ? { kind: 'none' } : { kind: 'found', uid };
}
