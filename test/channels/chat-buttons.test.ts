/** Slack Block Kit and Discord components for baton's buttons: shapes and platform limits (issue #14). */
import { describe, expect, it } from 'vitest';
import { discordComponents, parseDiscordCustomId } from '../../src/channels/discord/adapter.js';
import { slackBlocks } from '../../src/channels/slack/adapter.js';
import { ChannelSendError } from '../../src/channels/types.js';

describe('slackBlocks', () => {
  it('splits a text over 3,000 characters into sections and escapes it; buttons follow in one actions block', () => {
    const blocks = slackBlocks(`${'a'.repeat(3500)}<@U1>`, [
      { label: 'Allow', action: 'allow', arg: '7' },
      { label: 'Deny', action: 'deny', arg: '7' },
    ]);
    expect(blocks.map((b) => b.type)).toEqual(['section', 'section', 'actions']);
    const texts = blocks.slice(0, 2).map((b) => (b as { text: { text: string } }).text.text);
    expect(texts[0]).toHaveLength(3000);
    expect(texts[1]).toBe(`${'a'.repeat(500)}&lt;@U1&gt;`);
    expect((blocks[2] as { elements: unknown[] }).elements).toEqual([
      {
        type: 'button',
        action_id: 'baton:allow',
        value: '7',
        text: { type: 'plain_text', text: 'Allow', emoji: false },
      },
      {
        type: 'button',
        action_id: 'baton:deny',
        value: '7',
        text: { type: 'plain_text', text: 'Deny', emoji: false },
        style: 'danger',
      },
    ]);
  });

  it('never cuts an escape (&amp; &lt; &gt;) between two sections, and loses nothing', () => {
    for (let pad = 2994; pad <= 3000; pad++) {
      const text = `${'a'.repeat(pad)}&<>&${'b'.repeat(3100)}`;
      const texts = slackBlocks(text, [{ label: 'Stop', action: 'stop', arg: 'x' }])
        .filter((b) => b.type === 'section')
        .map((b) => (b as { text: { text: string } }).text.text);
      for (const part of texts) {
        expect(part.length).toBeLessThanOrEqual(3000);
        // Every & starts a whole entity within its own section.
        expect(part.replace(/&(amp|lt|gt);/g, ''), `pad ${pad}`).not.toMatch(/&|^(amp|lt|gt)?;|^(mp|t|p)?;/);
      }
      expect(texts.join('')).toBe(`${'a'.repeat(pad)}&amp;&lt;&gt;&amp;${'b'.repeat(3100)}`);
    }
  });

  it('keeps a mrkdwn code block whole in each section: closed at a cut and opened again', () => {
    const code = Array.from({ length: 150 }, (_, i) => `line ${i} ${'c'.repeat(30)}`).join('\n');
    const blocks = slackBlocks(
      `Changes:\n\`\`\`\n${code}\n\`\`\``,
      [{ label: 'Stop', action: 'stop', arg: 'x' }],
      'markdown',
    );
    const sections = blocks.filter((b) => b.type === 'section') as { text: { type: string; text: string } }[];
    expect(sections.length).toBeGreaterThan(1);
    for (const section of sections) {
      expect(section.text.type).toBe('mrkdwn');
      expect(section.text.text.length).toBeLessThanOrEqual(3000);
      expect(section.text.text.split('```').length % 2, section.text.text.slice(0, 40)).toBe(1);
    }
  });

  it('refuses a value over 2,000 characters with a typed error', () => {
    expect(() => slackBlocks('x', [{ label: 'X', action: 'stop', arg: 'v'.repeat(2001) }])).toThrow(ChannelSendError);
  });
});

describe('discordComponents', () => {
  it('puts at most 5 buttons in a row and reads custom_id back', () => {
    const buttons = Array.from({ length: 7 }, (_, i) => ({
      label: `Redeliver #${i}`,
      action: 'redeliver',
      arg: String(i),
    }));
    const rows = discordComponents(buttons);
    expect(rows.map((r) => r.components.length)).toEqual([5, 2]);
    expect(rows[0]!.components[0]).toEqual({
      type: 2,
      custom_id: 'baton:redeliver:0',
      label: 'Redeliver #0',
      style: 2,
    });
    expect(parseDiscordCustomId('baton:redeliver:0')).toEqual({ action: 'redeliver', arg: '0' });
    expect(parseDiscordCustomId('someone-else:1')).toBeUndefined();
  });

  it('refuses a custom_id over 100 characters with a typed error', () => {
    expect(() => discordComponents([{ label: 'X', action: 'stop', arg: 'r'.repeat(95) }])).toThrow(
      /custom_id is over 100/,
    );
  });
});
