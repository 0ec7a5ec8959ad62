/**
 * Starts the chat channels of the service: their inbox, leases and owner notices, with a paste
 * joiner in front of the dispatcher.
 */
import type { ChannelEnv, ChannelFactory, ChannelSettings } from '../channels/factory.js';
import { startChannels, type StartedChannels } from '../channels/start.js';
import { discordChannel } from '../channels/discord/factory.js';
import { slackChannel } from '../channels/slack/factory.js';
import { telegramChannel } from '../channels/telegram/factory.js';
import type { InboundMessage } from '../channels/types.js';
import type { BatonConfig, BatonEnv } from '../config/index.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import { overtakesConversation } from '../dispatch/overtaking.js';
import { PasteJoiner } from '../dispatch/paste-joiner.js';
import { DatabaseLease, leaseKey } from '../fleet/lease.js';
import type { NodeRegistry } from '../fleet/nodes.js';
import type { Runtime } from './runtime.js';

/** Chat platforms this build can talk to, in banner order. */
export const CHANNELS: readonly ChannelFactory[] = [telegramChannel, slackChannel, discordChannel];

/** What the service's channels are started with. */
export interface ServiceChannelsDeps {
  env: BatonEnv;
  config: BatonConfig;
  runtime: Runtime;
  fleet: NodeRegistry;
  clock: Clock;
  logger: Logger;
}

/** Creates and starts every configured channel (see {@link startChannels}). */
export function startServiceChannels(deps: ServiceChannelsDeps): Promise<StartedChannels> {
  const { env, config, runtime, fleet, clock, logger } = deps;
  const { dispatcher, store, supervisor, outbox, database } = runtime;
  // A long paste the chat app split into several messages reaches the dispatcher as one.
  // `/stop` and `/cancel` overtake a conversation's launch only while it downloads its files;
  // otherwise they keep their place (`/codex …` then `/stop` stops that run).
  const overtakes = (message: InboundMessage): boolean =>
    overtakesConversation(message) && dispatcher.downloadsPending(message);
  const pastes = new PasteJoiner({
    handle: (message) => dispatcher.handle(message),
    waitMs: config.harness.pasteJoinMs,
    logger,
    overtakes,
  });
  return startChannels(
    CHANNELS,
    (message) => pastes.handle(message),
    {
      env: channelEnv(env),
      settings: channelSettings(config),
      clock,
      logger,
      inbox: {
        recordInbox: (platform, updates) => store.inbox.recordInbox(platform, updates),
        receivedInbound: (platform) => store.inbox.receivedInbound(platform),
        forgetInbound: (platform, dedupeKey) => store.inbox.forgetInbound(platform, dedupeKey),
        releaseOwnClaims: (platform, inFlight) =>
          store.inbox.releaseClaimsOf(platform, supervisor.supervisorId, inFlight),
      },
      conversations: store.conversations,
      lease: (platform, token) =>
        new DatabaseLease({
          db: database.db,
          key: leaseKey(platform, token),
          holder: fleet.instance,
          nodeName: fleet.name,
          logger,
        }),
      notifyOwner: (platform, text) => {
        // A private chat with a Telegram user has the user's id as its chat id.
        const owner = config.channels[platform].owner;
        if (!owner) return;
        void outbox
          .send({ runId: null, kind: 'notice', target: { platform, chatId: owner }, body: text })
          .catch((err: unknown) => logger.error({ err, platform }, 'could not tell the owner'));
      },
      presses: async (press) => void (await dispatcher.handlePress(press)),
      overtakes,
    },
    runtime.adapters,
  );
}

/** What of the config file the channels use: the owners (for the banner) and the paste wait (for albums). */
function channelSettings(config: BatonConfig): ChannelSettings {
  const { telegram, slack, discord } = config.channels;
  return {
    owners: { telegram: telegram.owner, slack: slack.owner, discord: discord.owner },
    pasteJoinMs: config.harness.pasteJoinMs,
  };
}

/** The environment variables the channels read, per platform. */
export function channelEnv(env: BatonEnv): ChannelEnv {
  return {
    telegram: { botToken: env.telegramBotToken, apiRoot: env.telegramApiRoot },
    slack: {
      botToken: env.slackBotToken,
      appToken: env.slackAppToken,
      signingSecret: env.slackSigningSecret,
      port: env.slackPort,
      apiUrl: env.slackApiUrl,
    },
    discord: { botToken: env.discordBotToken, apiUrl: env.discordApiUrl },
  };
}
