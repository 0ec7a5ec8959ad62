/**
 * baton's buttons as Discord message components (Discord "Message Components": action rows of
 * buttons, each with a `custom_id` that comes back in the press's interaction).
 */
import {
  ButtonStyle,
  ComponentType,
  type APIActionRowComponent,
  type APIButtonComponentWithCustomId,
} from 'discord.js';
import type { ButtonJson } from '../../core/buttons.js';
import { isDanger } from '../button-style.js';
import { ChannelSendError } from '../types.js';

/** Prefix of the `custom_id` of every baton button: `baton:<action>:<arg>`. */
export const DISCORD_CUSTOM_ID_PREFIX = 'baton:';
/** Longest `custom_id` of a component, in characters (Discord "Message Components": 1-100). */
export const DISCORD_CUSTOM_ID_MAX = 100;
/** Most buttons in one action row (Discord "Action Row": up to 5). */
const DISCORD_ROW_MAX = 5;

/**
 * Message components for baton's buttons: action rows (type 1) of up to 5 buttons (type 2), style
 * danger for Stop and Deny, secondary otherwise, `custom_id` `baton:<action>:<arg>`.
 *
 * @throws ChannelSendError `malformed` when a `custom_id` is over 100 characters.
 */
export function discordComponents(
  buttons: readonly ButtonJson[],
): APIActionRowComponent<APIButtonComponentWithCustomId>[] {
  const rows: APIActionRowComponent<APIButtonComponentWithCustomId>[] = [];
  buttons.forEach((button, index) => {
    const customId = `${DISCORD_CUSTOM_ID_PREFIX}${button.action}:${button.arg}`;
    if (customId.length > DISCORD_CUSTOM_ID_MAX)
      throw new ChannelSendError(
        'malformed',
        `Discord custom_id is over ${DISCORD_CUSTOM_ID_MAX} characters: ${customId}`,
      );
    if (index % DISCORD_ROW_MAX === 0) rows.push({ type: ComponentType.ActionRow, components: [] });
    rows.at(-1)!.components.push({
      type: ComponentType.Button,
      custom_id: customId,
      label: button.label,
      style: isDanger(button.action) ? ButtonStyle.Danger : ButtonStyle.Secondary,
    });
  });
  return rows;
}

/** Reads `baton:<action>:<arg>` back; undefined for a custom_id baton did not write. */
export function parseDiscordCustomId(customId: string): { action: string; arg: string } | undefined {
  const match = /^baton:([a-z_]+):(.+)$/.exec(customId);
  return match ? { action: match[1]!, arg: match[2]! } : undefined;
}
