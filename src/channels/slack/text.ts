/**
 * Slack message text in both directions. Slack encodes message text ("Formatting text for app
 * surfaces", docs.slack.dev): `&`, `<` and `>` arrive as `&amp;`, `&lt;`, `&gt;`, and `<…>` holds
 * control sequences — user mentions `<@U…|name>`, channel links `<#C…|name>`, special mentions
 * `<!channel>`/`<!here>`/`<!everyone>`, user groups `<!subteam^S…|@team>` and links `<url|label>`.
 */
import { toSlackMrkdwn } from '../../delivery/chat-markdown.js';

/** Matches one Slack control sequence `<…>`. */
const CONTROL_SEQUENCE = /<([^<>]*)>/g;

/** Removes every mention of `botUserId` (`<@U…>` or `<@U…|name>`) and trims the rest. */
export function stripBotMention(text: string, botUserId: string): string {
  const mention = new RegExp(`<@${escapeRegExp(botUserId)}(?:\\|[^>]*)?>`, 'g');
  return text
    .replace(mention, ' ')
    .replace(/[ \t]{2,}/g, ' ')
    .trim();
}

/**
 * Encoded Slack text → the plain text a person saw: control sequences become their visible form
 * (`<!channel>` → `@channel`, `<@U1|ann>` → `@ann`, `<https://x.dev|x.dev>` → `x.dev`), then the
 * three entities are decoded. A task text handed to an agent is plain text, never Slack markup.
 */
export function decodeSlackText(text: string): string {
  const visible = text.replace(CONTROL_SEQUENCE, (_whole, inner: string) => {
    const bar = inner.indexOf('|');
    const target = bar === -1 ? inner : inner.slice(0, bar);
    const label = bar === -1 ? undefined : inner.slice(bar + 1);
    if (target.startsWith('@')) return label ? `@${label.replace(/^@/, '')}` : target;
    if (target.startsWith('#')) return label ? `#${label}` : target;
    if (target.startsWith('!')) {
      const special = target.slice(1);
      if (special === 'channel' || special === 'here' || special === 'everyone') return `@${special}`;
      return label ?? `@${special}`;
    }
    if (label === undefined || label === target) return target;
    // Slack auto-links what the user typed (`x.dev` → `<http://x.dev|x.dev>`): keep what they typed.
    return target.endsWith(label) ? label : `${label} (${target})`;
  });
  return visible.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}

/**
 * Plain text → Slack text that renders exactly as given: `&`, `<`, `>` escaped, so no user content
 * can form a mention (`<!channel>`), a link or a broken control sequence ("Escaping text").
 * Each character grows to at most 5 (`&amp;`); Slack truncates only past 40,000 characters
 * (changelog "Truncating really long messages", 2018-04), so a 4,000-character part stays whole.
 */
export function escapeSlackText(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** A body as Slack text: `markdown` rendered as mrkdwn, `plain` escaped as it is. */
export function slackText(text: string, format: 'plain' | 'markdown'): string {
  return format === 'markdown' ? toSlackMrkdwn(text) : escapeSlackText(text);
}
