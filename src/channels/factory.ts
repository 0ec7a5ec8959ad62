/**
 * What a channel factory is given and how it builds its adapter: the plain values of the
 * environment and the config file the channels read (the wiring passes them; the channels never
 * read config themselves), and the options every adapter takes unchanged.
 */
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import { notSetReason } from '../wording/channels.js';
import type {
  ChannelAdapter,
  ChannelPlatform,
  ConnectionLease,
  ConversationMover,
  InboundInbox,
  InboundMessage,
  Platform,
  PressHandler,
} from './types.js';

/**
 * The environment the channels read, validated, per platform: each platform's bot token
 * (`<PLATFORM>_BOT_TOKEN`, secret) and its other variables. Unset: undefined.
 */
export interface ChannelEnv {
  /** `TELEGRAM_BOT_TOKEN`; `TELEGRAM_API_ROOT`, an http(s) URL of a self-hosted Bot API server. */
  readonly telegram: { readonly botToken: string | undefined; readonly apiRoot: string | undefined };
  /**
   * `SLACK_BOT_TOKEN`; `SLACK_APP_TOKEN` (secret, Socket Mode) or `SLACK_SIGNING_SECRET` (secret)
   * and `SLACK_PORT` (the HTTP Events API receiver's TCP port); `SLACK_API_URL`, an http(s) URL.
   */
  readonly slack: {
    readonly botToken: string | undefined;
    readonly appToken: string | undefined;
    readonly signingSecret: string | undefined;
    readonly port: number | undefined;
    readonly apiUrl: string | undefined;
  };
  /** `DISCORD_BOT_TOKEN`; `DISCORD_API_URL`, an http(s) URL of the REST API. */
  readonly discord: { readonly botToken: string | undefined; readonly apiUrl: string | undefined };
}

/** The variable that holds each platform's bot token, for the reason a platform is skipped. */
const BOT_TOKEN_VARIABLES: Readonly<Record<ChannelPlatform, string>> = {
  telegram: 'TELEGRAM_BOT_TOKEN',
  slack: 'SLACK_BOT_TOKEN',
  discord: 'DISCORD_BOT_TOKEN',
};

/** What of the config file the channels use, as read at start. */
export interface ChannelSettings {
  /** Each platform's owner (`owner_user_id` of its `[channels.*]` table); undefined: nobody may launch runs. */
  readonly owners: Readonly<Record<ChannelPlatform, string | undefined>>;
  /** Wait for the next part of a message the client sent in parts (`[harness] paste_join_ms`), in ms; 0: none. */
  readonly pasteJoinMs: number;
}

/** The options every adapter is built with besides its own connection's: the clock, the log, and where what it receives goes. */
export interface AdapterBaseOptions {
  clock: Clock;
  logger: Logger;
  /** Where each message meant for baton is stored before it is handled (each adapter says when). @default none */
  inbox?: InboundInbox | undefined;
  /** Where presses of baton's buttons go. @default none: a press is answered that the button does nothing */
  presses?: PressHandler | undefined;
  /**
   * Messages handled at once, not behind their conversation's earlier ones still being handled
   * (`/stop`, `/cancel` while a launch downloads its files). @default none
   */
  overtakes?: ((message: InboundMessage) => boolean) | undefined;
}

/** What a channel factory receives. */
export interface ChannelDeps extends AdapterBaseOptions {
  env: ChannelEnv;
  settings: ChannelSettings;
  /** Where a channel reports that a conversation moved to a new chat id. @default none */
  conversations?: ConversationMover;
  /**
   * The fleet's lease on a connection only one process may hold, keyed by platform and token.
   * @default none (this process always connects)
   */
  lease?: (platform: Platform, token: string) => ConnectionLease;
  /** Tells the platform's owner something once (e.g. a poller outside the fleet). @default none */
  notifyOwner?: (platform: ChannelPlatform, text: string) => void;
}

/**
 * Builds one platform's adapter from the environment, or says why it is not configured. Async
 * so a platform's SDK is loaded only when that platform is configured.
 */
export interface ChannelFactory {
  platform: ChannelPlatform;
  create(deps: ChannelDeps): Promise<ChannelAdapter | { skipped: string }>;
  /**
   * Starts loading the platform's SDK when the environment configures the platform (undefined
   * otherwise), so start-up can overlap it with opening the database; `create` then finds the
   * module loaded. @default none
   */
  preload?(env: ChannelEnv): Promise<unknown> | undefined;
}

/**
 * A factory that loads its SDK only when the platform's bot token is set (an SDK costs hundreds
 * of ms and tens of MB) and is skipped with "`<PLATFORM>_BOT_TOKEN` not set" otherwise.
 *
 * @param load - imports the adapter's module, and with it the platform's SDK.
 * @param build - the adapter, from the loaded module, the options every adapter takes (with the
 *   token) and the deps; or why it is skipped after all.
 */
export function lazyChannel<M>(
  platform: ChannelPlatform,
  load: () => Promise<M>,
  build: (
    module: M,
    base: AdapterBaseOptions & { token: string },
    deps: ChannelDeps,
  ) => ChannelAdapter | { skipped: string },
): ChannelFactory {
  return {
    platform,
    preload: (env) => (env[platform].botToken ? load() : undefined),
    create: async (deps) => {
      const token = deps.env[platform].botToken;
      if (!token) return { skipped: notSetReason(BOT_TOKEN_VARIABLES[platform]) };
      return build(await load(), { ...adapterBase(deps), token }, deps);
    },
  };
}

/** The options every adapter takes from its factory's deps unchanged. */
function adapterBase({ clock, logger, inbox, presses, overtakes }: ChannelDeps): AdapterBaseOptions {
  return { clock, logger, inbox, presses, overtakes };
}
