/**
 * Keeping a Socket Mode connection: on every disconnect, reconnect with backoff (our own:
 * @slack/socket-mode's leaves a rejected promise unhandled when apps.connections.open fails on
 * the network, which would end the process) and mirror the state.
 */
import type { SocketModeReceiver } from '@slack/bolt';
import type { Logger } from '../../core/logger.js';
import type { ChannelState } from '../types.js';
import { describeSlackError } from './errors.js';

/** First wait before reconnecting a lost Socket Mode connection, in ms; doubles per failure. */
const SOCKET_RETRY_FIRST_MS = 1_000;
/** Longest wait between Socket Mode reconnection attempts, in ms. */
const SOCKET_RETRY_MAX_MS = 60_000;

/** What the watch reads and reports to: whether the app still runs, and the channel state. */
export interface SocketWatchHost {
  logger: Logger;
  secrets: readonly string[];
  /** True while the adapter's app is started (a stopped adapter never reconnects). */
  running(): boolean;
  setState(state: ChannelState): void;
}

/** The reconnection of one adapter's Socket Mode connection. */
export class SocketWatch {
  private retryMs = SOCKET_RETRY_FIRST_MS;
  private retryTimer: NodeJS.Timeout | undefined;

  constructor(private readonly host: SocketWatchHost) {}

  /** Watches `receiver`'s socket from now on. */
  watch(receiver: SocketModeReceiver): void {
    const socket = receiver.client;
    socket.on('connected', () => {
      this.retryMs = SOCKET_RETRY_FIRST_MS;
      if (this.host.running()) this.host.setState({ state: 'connected' });
    });
    socket.on('disconnected', () => {
      if (this.host.running()) this.reconnect(receiver, 'Socket Mode connection lost');
    });
  }

  /** Cancels a pending reconnection. */
  stop(): void {
    if (this.retryTimer) clearTimeout(this.retryTimer);
  }

  private reconnect(receiver: SocketModeReceiver, reason: string): void {
    if (this.retryTimer || !this.host.running()) return;
    const waitMs = this.retryMs;
    this.retryMs = Math.min(waitMs * 2, SOCKET_RETRY_MAX_MS);
    this.host.setState({ state: 'reconnecting', reason });
    this.host.logger.warn(
      { channel: 'slack', reason, retryInMs: waitMs },
      'slack socket mode disconnected; reconnecting',
    );
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      if (!this.host.running()) return;
      receiver.client
        .start()
        .catch((err: unknown) => this.reconnect(receiver, describeSlackError(err, this.host.secrets)));
    }, waitMs);
    this.retryTimer.unref();
  }
}
