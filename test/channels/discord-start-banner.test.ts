/**
 * The start-up banner says what happened to Discord: a login that failed behind the fleet lease
 * (the lease's onAcquired connects) is `failed: … unreachable (retrying in 60s)`, not `connected`.
 * Discord is a closed loopback port (nothing listens), as with no network.
 */
import { createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { DiscordAdapter } from '../../src/channels/discord/adapter.js';
import { startChannels, type StartedChannels } from '../../src/channels/start.js';
import type { ChannelAdapter, ConnectionLease, Platform } from '../../src/channels/types.js';
import { systemClock } from '../../src/core/clock.js';
import { silentLogger } from '../../src/core/logger.js';

/** A port that was free a moment ago: nothing listens on it. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (!address || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/** A lease this process takes at once, as a single node's does. */
function heldLease(): ConnectionLease {
  return {
    start: async (callbacks) => {
      await callbacks.onAcquired();
    },
    stop: async () => undefined,
    state: () => ({ state: 'holding' }),
  };
}

let started: StartedChannels | undefined;
afterEach(async () => {
  for (const adapter of started?.all.values() ?? []) await adapter.stop();
  started = undefined;
});

describe('startChannels with Discord unreachable', () => {
  it.each([
    ['behind the fleet lease', true],
    ['without a lease', false],
  ])(
    'reports failed with the reason and the retry, %s',
    async (_label, leased) => {
      const port = await closedPort();
      const settings = { owners: { telegram: undefined, slack: undefined, discord: undefined }, pasteJoinMs: 0 };
      const adapter = new DiscordAdapter({
        token: 'fake.discord-token.value',
        apiUrl: `http://127.0.0.1:${port}/api`,
        clock: systemClock,
        logger: silentLogger(),
        readyTimeoutMs: 20_000,
        lease: leased ? heldLease() : undefined,
      });
      started = await startChannels(
        [{ platform: 'discord', create: async () => adapter }],
        async () => undefined,
        { env: {} as never, settings, clock: systemClock, logger: silentLogger() },
        new Map<Platform, ChannelAdapter>(),
      );
      expect(started.lines).toHaveLength(1);
      expect(started.lines[0]).toMatch(/^discord: failed: Discord .*unreachable.*\(retrying in 60s\)$/);
      expect(started.lines[0]).not.toContain('fake.discord-token.value');
      expect(adapter.status().state).toBe('failed');
    },
    60_000,
  );
});
