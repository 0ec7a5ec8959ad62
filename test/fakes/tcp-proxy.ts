/**
 * A TCP proxy on 127.0.0.1 in front of a real server (PostgreSQL in the tests) that can make the
 * network blink: `cut()` destroys every open connection at once, and `refuse()` keeps new ones
 * out (accepted, then reset straight away) until `accept()`. Loopback only.
 */
import { createConnection, createServer, type AddressInfo, type Socket } from 'node:net';

/** A running proxy. */
export interface TcpProxy {
  /** The proxy's port on 127.0.0.1. */
  port: number;
  /** `url` with its host and port replaced by the proxy's. */
  rewrite(url: string): string;
  /**
   * Cuts every open connection; returns how many were cut. `reset` (the default) resets the
   * client side, as a dropped host or NAT entry does (the client sees ECONNRESET); `close` ends it
   * with a FIN, as a server or pooler closing it does (the client sees a plain close).
   */
  cut(how?: 'reset' | 'close'): number;
  /** From now on new connections are reset as soon as they arrive. */
  refuse(): void;
  /** New connections are forwarded again. */
  accept(): void;
  /**
   * Stalls the server as seen by the clients: what they send is kept, not forwarded, until the
   * returned function is called (then it goes on, in order). Connections stay open.
   */
  hold(): () => void;
  /**
   * The next client chunk that contains `text` (bytes read as latin1, e.g. part of an SQL
   * statement in a Parse message) is not forwarded: its connection is closed with a FIN instead,
   * as a server closing an idle session does just as the statement arrives. Once only; resolves
   * when it happened.
   */
  closeWhenClientSends(text: string): Promise<void>;
  /** Connections accepted and forwarded so far (refused ones not counted). */
  readonly forwarded: number;
  /**
   * Chunks the clients have sent so far (each `data` event on a client socket). A client that
   * waits for the server between its writes, as a driver does within one query, sends one chunk
   * per turn, so this counts round trips.
   */
  readonly clientChunks: number;
  /** Connections reset while refusing. */
  readonly refused: number;
  /** Pairs open right now. */
  readonly open: number;
  close(): Promise<void>;
}

/** Starts a proxy on 127.0.0.1:0 that forwards to `target`. */
export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  let held: (() => void)[] | undefined;
  const pairs = new Set<{ client: Socket; upstream: Socket }>();
  let refusing = false;
  let forwarded = 0;
  let refused = 0;
  let clientChunks = 0;
  const traps: { text: string; sprung: () => void }[] = [];
  const server = createServer((client) => {
    if (refusing) {
      refused += 1;
      client.resetAndDestroy();
      return;
    }
    forwarded += 1;
    const upstream = createConnection(target);
    const pair = { client, upstream };
    pairs.add(pair);
    const drop = (): void => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    client.on('data', (chunk: Buffer) => {
      clientChunks += 1;
      const trap = traps.find((t) => chunk.toString('latin1').includes(t.text));
      if (trap) {
        traps.splice(traps.indexOf(trap), 1);
        drop();
        trap.sprung();
        return;
      }
      if (held) return void held.push(() => upstream.write(chunk));
      if (!upstream.write(chunk)) {
        client.pause();
        upstream.once('drain', () => client.resume());
      }
    });
    upstream.pipe(client);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    port,
    rewrite: (url) => {
      const parsed = new URL(url);
      parsed.hostname = '127.0.0.1';
      parsed.port = String(port);
      return parsed.toString();
    },
    cut: (how = 'reset') => {
      const n = pairs.size;
      for (const pair of [...pairs]) {
        if (how === 'reset') pair.client.resetAndDestroy();
        else pair.client.destroy();
        pair.upstream.destroy();
        pairs.delete(pair);
      }
      return n;
    },
    hold: () => {
      const queue: (() => void)[] = [];
      held = queue;
      return () => {
        if (held === queue) held = undefined;
        for (const write of queue.splice(0)) write();
      };
    },
    closeWhenClientSends: (text) => new Promise<void>((resolve) => traps.push({ text, sprung: resolve })),
    refuse: () => {
      refusing = true;
    },
    accept: () => {
      refusing = false;
    },
    get forwarded() {
      return forwarded;
    },
    get refused() {
      return refused;
    },
    get clientChunks() {
      return clientChunks;
    },
    get open() {
      return pairs.size;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const pair of pairs) {
          pair.client.destroy();
          pair.upstream.destroy();
        }
        pairs.clear();
        server.close(() => resolve());
      }),
  };
}
