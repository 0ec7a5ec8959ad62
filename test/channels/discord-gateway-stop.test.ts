/**
 * Stopping the Discord adapter gives the fleet lease back even when discord.js fails to close its
 * session: a lease kept after a stop holds the token away from every other node until its TTL
 * runs out, and the failure itself reaches the caller rather than vanishing.
 */
import { Client } from 'discord.js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DiscordAdapter } from '../../src/channels/discord/adapter.js';
import type { ConnectionLease } from '../../src/channels/types.js';
import { systemClock } from '../../src/core/clock.js';
import { silentLogger } from '../../src/core/logger.js';
import { startFakeDiscord, type FakeDiscord } from '../fakes/fake-discord.js';

const TOKEN = 'unit.discord-token.value';

let discord: FakeDiscord | undefined;
afterEach(async () => {
  vi.restoreAllMocks();
  await discord?.close();
  discord = undefined;
});

/** A lease taken at once, which counts how often it was given back. */
function countingLease(): ConnectionLease & { stops: number } {
  const lease = {
    stops: 0,
    start: async (callbacks: Parameters<ConnectionLease['start']>[0]) => {
      await callbacks.onAcquired();
    },
    stop: async () => {
      lease.stops += 1;
    },
    state: () => ({ state: 'holding' as const }),
  };
  return lease;
}

describe('DiscordAdapter.stop', () => {
  it('gives the lease back when destroying the client fails, and reports the failure', async () => {
    discord = await startFakeDiscord({ token: TOKEN });
    const lease = countingLease();
    const adapter = new DiscordAdapter({
      token: TOKEN,
      apiUrl: discord.url,
      clock: systemClock,
      logger: silentLogger(),
      lease,
    });
    await adapter.start(async () => undefined);
    await expect.poll(() => adapter.status().state, { timeout: 20_000 }).toBe('connected');
    const destroy = Client.prototype.destroy;
    vi.spyOn(Client.prototype, 'destroy').mockImplementationOnce(async function (this: Client) {
      await destroy.call(this);
      throw new Error('gateway close failed');
    });

    await expect(adapter.stop()).rejects.toThrow('gateway close failed');
    expect(lease.stops).toBe(1);
    expect(adapter.status().state).toBe('stopped');
  }, 60_000);
});
