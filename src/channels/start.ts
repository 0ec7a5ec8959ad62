/**
 * Starts every configured channel: a channel that is not configured is skipped
 * with its reason; one that fails to start is reported and retried with backoff in the
 * background, and never stops the others or the service.
 */
import type { ChannelDeps, ChannelEnv, ChannelFactory } from './factory.js';
import { noOwnerHint, retryingReason } from '../wording/channels.js';
import type { ChannelAdapter, ChannelPlatform, ChannelState, InboundHandler, Platform } from './types.js';

/**
 * Starts loading the SDKs of the configured channels and returns at once. Loading ~1,500
 * CommonJS modules is CPU work that otherwise starts only after the database is open and
 * migrated; started first, it runs while start-up waits on PostgreSQL round trips.
 * A module that fails to load fails again, reported, in {@link startChannels}.
 */
export function preloadChannels(factories: readonly ChannelFactory[], env: ChannelEnv): void {
  for (const factory of factories) {
    // Reported by `create`, which imports the same module (the loader keeps the failure).
    factory.preload?.(env)?.catch(() => undefined);
  }
}

/** Retry schedule of a channel that failed to start. */
export interface ChannelRetryPolicy {
  /** First wait, in ms; doubles per failure. @default 60_000 */
  firstRetryMs: number;
  /** Longest wait, in ms. @default 1_800_000 */
  maxRetryMs: number;
}

/** The running channels. */
export interface StartedChannels {
  /** Connected adapters by platform; a channel that connects later is added here. */
  adapters: Map<Platform, ChannelAdapter>;
  /** One banner line per platform. */
  lines: string[];
  /** Adapters that exist (connected or retrying), for doctor and health. */
  all: ReadonlyMap<Platform, ChannelAdapter>;
  /** Each platform as doctor sees it: configured or why not, and the adapter's live state. */
  probes(): Record<ChannelPlatform, { configured: boolean; reason?: string; state?: ChannelState }>;
  stop(): Promise<void>;
}

/**
 * Creates and starts every channel. Resolves after each channel's first start attempt.
 */
export async function startChannels(
  factories: readonly ChannelFactory[],
  handler: InboundHandler,
  deps: ChannelDeps,
  adapters: Map<Platform, ChannelAdapter>,
  policy: ChannelRetryPolicy = { firstRetryMs: 60_000, maxRetryMs: 1_800_000 },
): Promise<StartedChannels> {
  const lines: string[] = [];
  const all = new Map<Platform, ChannelAdapter>();
  const skipped = new Map<ChannelPlatform, string>();
  const timers = new Set<NodeJS.Timeout>();
  let stopped = false;

  const attempt = async (adapter: ChannelAdapter, waitMs: number): Promise<string> => {
    try {
      await adapter.start(handler);
      // A standby (another node of the fleet polls this bot) still sends through this adapter.
      adapters.set(adapter.platform, adapter);
      // Behind a fleet lease the adapter connects in the lease's callback and does not throw: its
      // state says whether that worked (and, when it failed, when it tries again).
      const now = adapter.status();
      if (now.state === 'standby' || now.state === 'failed' || now.state === 'reconnecting')
        return `${now.state}: ${now.reason}`;
      return 'connected';
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      deps.logger.error({ channel: adapter.platform, reason, retryInMs: waitMs }, 'channel failed to start; retrying');
      const timer = setTimeout(() => {
        timers.delete(timer);
        if (stopped) return;
        void attempt(adapter, Math.min(waitMs * 2, policy.maxRetryMs)).then((state) => {
          if (state === 'connected') deps.logger.info({ channel: adapter.platform }, 'channel connected after retry');
        });
      }, waitMs);
      timer.unref();
      timers.add(timer);
      return `failed: ${retryingReason(reason, waitMs)}`;
    }
  };

  // Channels are created, then connected, side by side (each connect is a few round trips to
  // its platform); `all` and the banner lines keep the factories' order.
  const created = await Promise.all(factories.map((factory) => factory.create(deps)));
  for (const adapter of created) if (!('skipped' in adapter)) all.set(adapter.platform, adapter);
  const states = await Promise.all(
    created.map((adapter) => ('skipped' in adapter ? undefined : attempt(adapter, policy.firstRetryMs))),
  );
  factories.forEach((factory, i) => {
    const made = created[i]!;
    if ('skipped' in made) {
      skipped.set(factory.platform, made.skipped);
      lines.push(`${factory.platform}: not started: ${made.skipped}`);
      return;
    }
    const state = states[i]!;
    const owner = deps.settings.owners[factory.platform];
    const ownerHint = owner ? '' : noOwnerHint(factory.platform);
    lines.push(`${factory.platform}: ${state}${state === 'connected' ? ownerHint : ''}`);
  });

  return {
    adapters,
    lines,
    all,
    probes: () => {
      const probe = (platform: ChannelPlatform): { configured: boolean; reason?: string; state?: ChannelState } => {
        const adapter = all.get(platform);
        if (adapter) return { configured: true, state: adapter.status() };
        return { configured: false, reason: skipped.get(platform) ?? 'not supported by this build' };
      };
      return { telegram: probe('telegram'), slack: probe('slack'), discord: probe('discord') };
    },
    stop: async () => {
      stopped = true;
      for (const timer of timers) clearTimeout(timer);
      for (const adapter of all.values()) {
        await adapter
          .stop()
          .catch((err: unknown) => deps.logger.warn({ err, channel: adapter.platform }, 'channel stop failed'));
      }
    },
  };
}
