/**
 * Presses of baton's Discord buttons (`INTERACTION_CREATE` of a button component): stored,
 * acknowledged within Discord's 3 s, handed to the press handler, answered with an ephemeral
 * follow-up only the presser sees.
 */
import { MessageFlags, Routes, type ButtonInteraction, type REST } from 'discord.js';
import type { Clock } from '../../core/clock.js';
import type { Logger } from '../../core/logger.js';
import { staleButtonAnswer } from '../../wording/channels.js';
import type { ChannelInbox } from '../inbox.js';
import type { PressHandler } from '../types.js';
import { parseDiscordCustomId } from './buttons.js';
import { describeDiscordError } from './errors.js';
import type { DiscordPressPayload, DiscordStored } from './normalize.js';
import { DISCORD_MAX_MESSAGE_LENGTH } from './send.js';

/** Longest wait for a press's inbox write before it is acknowledged anyway, in ms (Discord allows 3 s). */
const PRESS_STORE_WAIT_MS = 1_000;

/** What handling a press needs of the adapter. */
export interface DiscordPressContext {
  rest: REST;
  token: string;
  clock: Clock;
  logger: Logger;
  inbox: ChannelInbox<DiscordStored>;
  /** Where presses go. @default none: a press is answered "no longer does anything" */
  presses?: PressHandler | undefined;
}

/**
 * One press of a baton button: stored in the inbox (waited for 1 s at most, so a stalled
 * database cannot make it miss Discord's 3 s), acknowledged with `deferUpdate` (interaction
 * callback type 6), then, once stored, handed to
 * {@link handleDiscordPress}. A press stored by a process that died before acting on it is replayed at
 * the next start, like a message; the dispatcher's claim by dedupe key (the interaction id)
 * keeps a press from acting twice.
 */
export async function receiveDiscordPress(context: DiscordPressContext, interaction: ButtonInteraction): Promise<void> {
  const { logger, clock, inbox, token } = context;
  const stored: DiscordPressPayload = {
    press: {
      id: interaction.id,
      applicationId: interaction.applicationId,
      token: interaction.token,
      channelId: interaction.channelId,
      guildId: interaction.guildId,
      messageId: interaction.message.id,
      userId: interaction.user.id,
      customId: interaction.customId,
    },
  };
  // Discord never delivers the interaction again: a failed write is logged and the press still handled.
  const recorded = parseDiscordCustomId(interaction.customId)
    ? inbox
        .record([{ dedupeKey: interaction.id, receivedAt: clock.now(), payload: stored }])
        .catch((err: unknown) =>
          logger.error(
            { channel: 'discord', err: describeDiscordError(err, token) },
            'could not store a discord button press; handling it anyway',
          ),
        )
    : Promise.resolve();
  // The acknowledgement is due within Discord's 3 s whatever the database does: the write is
  // waited for PRESS_STORE_WAIT_MS at most; the press is acted on once the database answers.
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([recorded, new Promise<void>((resolve) => (timer = setTimeout(resolve, PRESS_STORE_WAIT_MS)))]);
  clearTimeout(timer);
  // A failed acknowledgement (the 3 s passed, or this interaction was acknowledged already) is
  // logged and the press still handed on: the dispatcher's claim keeps a duplicate from acting.
  await interaction
    .deferUpdate()
    .catch((err: unknown) =>
      logger.info(
        { channel: 'discord', err: describeDiscordError(err, token) },
        'could not acknowledge a button press',
      ),
    );
  await recorded;
  await handleDiscordPress(context, stored.press);
}

/**
 * A press, live or replayed, normalized and handed to the press handler; the answer is an
 * ephemeral follow-up (`POST /webhooks/{application}/{token}`, flag EPHEMERAL) only the presser
 * sees, sent through REST with the interaction's token, so a replayed press is answered too
 * while its token is valid.
 */
export async function handleDiscordPress(
  context: DiscordPressContext,
  press: DiscordPressPayload['press'],
): Promise<void> {
  const { clock, inbox, presses } = context;
  const answer = pressAnswer(context, press);
  const parsed = parseDiscordCustomId(press.customId);
  if (!parsed || !presses) {
    await inbox.forget(press.id);
    await answer(staleButtonAnswer);
    return;
  }
  await inbox.track(press.id, () =>
    presses({
      platform: 'discord',
      dedupeKey: press.id,
      chatId: press.channelId,
      messageId: press.messageId,
      senderId: press.userId,
      isDirect: press.guildId === null,
      action: parsed.action,
      arg: parsed.arg,
      receivedAt: clock.now(),
      answer,
    }),
  );
}

/** The press's answer: one ephemeral follow-up at most; a failure is logged, never thrown. */
function pressAnswer(
  { rest, token, logger }: DiscordPressContext,
  press: DiscordPressPayload['press'],
): (text: string) => Promise<void> {
  let answered = false;
  return async (text) => {
    if (answered) return;
    answered = true;
    await rest
      .post(Routes.webhook(press.applicationId, press.token), {
        body: {
          content: text.slice(0, DISCORD_MAX_MESSAGE_LENGTH),
          flags: MessageFlags.Ephemeral,
          allowed_mentions: { parse: [] },
        },
        auth: false,
      })
      .catch((err: unknown) =>
        logger.info({ channel: 'discord', err: describeDiscordError(err, token) }, 'could not answer a button press'),
      );
  };
}
