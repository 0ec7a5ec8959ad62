/**
 * baton's buttons on Slack: Block Kit `section` blocks for the text and one `actions` block of
 * `button` elements whose `action_id` is `baton:<action>` and `value` the arg.
 */
import type { types as slackTypes } from '@slack/bolt';
import type { ButtonJson } from '../../core/buttons.js';
import { isDanger } from '../button-style.js';
import { ChannelSendError } from '../types.js';
import { splitSlackSections } from './sections.js';
import { slackText } from './text.js';

/** Prefix of the `action_id` of every baton button: `baton:<action>` (the arg is the button's `value`). */
export const SLACK_ACTION_PREFIX = 'baton:';
/** Longest `action_id` and `value` of a button (Block Kit "Button element": 255 and 2000 characters). */
const SLACK_ACTION_ID_MAX = 255;
const SLACK_BUTTON_VALUE_MAX = 2000;
/** Most elements of one `actions` block (Block Kit "Actions block": max 25) — baton's rows have at most 3. */
const SLACK_ACTIONS_MAX = 25;

/**
 * Block Kit for a message with buttons: the text (escaped, as `plain_text`; a `markdown` text as
 * `mrkdwn`) in `section` blocks of at most 3,000 characters each, cut as {@link splitSlackSections} cuts, then one `actions` block with a `button` per {@link ButtonJson}:
 * `action_id` `baton:<action>`, `value` the arg; Deny and Stop are `danger`. Without buttons only
 * the sections (an edit that removes the buttons).
 *
 * @throws ChannelSendError `malformed` when an `action_id` or `value` is over Slack's limits.
 */
export function slackBlocks(
  text: string,
  buttons: readonly ButtonJson[],
  format: 'plain' | 'markdown' = 'plain',
): slackTypes.KnownBlock[] {
  const mrkdwn = format === 'markdown';
  const blocks: slackTypes.KnownBlock[] = splitSlackSections(slackText(text, format), mrkdwn).map((part) => ({
    type: 'section',
    text: mrkdwn ? { type: 'mrkdwn', text: part } : { type: 'plain_text', text: part, emoji: false },
  }));
  if (buttons.length === 0) return blocks;
  if (buttons.length > SLACK_ACTIONS_MAX)
    throw new ChannelSendError(
      'malformed',
      `Slack actions block: ${buttons.length} buttons, over ${SLACK_ACTIONS_MAX}`,
    );
  blocks.push({ type: 'actions', elements: buttons.map(slackButton) });
  return blocks;
}

/** One `button` element. @throws ChannelSendError `malformed` past Slack's limits. */
function slackButton(button: ButtonJson): slackTypes.Button {
  const actionId = `${SLACK_ACTION_PREFIX}${button.action}`;
  if (actionId.length > SLACK_ACTION_ID_MAX || button.arg.length > SLACK_BUTTON_VALUE_MAX) {
    throw new ChannelSendError(
      'malformed',
      `Slack button ${actionId}: action_id over ${SLACK_ACTION_ID_MAX} or value over ${SLACK_BUTTON_VALUE_MAX} characters`,
    );
  }
  return {
    type: 'button',
    action_id: actionId,
    value: button.arg,
    text: { type: 'plain_text', text: button.label, emoji: false },
    ...(isDanger(button.action) ? { style: 'danger' as const } : {}),
  };
}
