/**
 * The Markdown renderers for chat (src/delivery/chat-markdown.ts): Telegram HTML that the Bot API
 * parses (checked with the fake Telegram's parser, which refuses what Telegram refuses), Slack
 * mrkdwn, plain words for a terminal, and the escaping that makes outside text literal.
 */
import { describe, expect, it } from 'vitest';
import { toPlainText, toSlackMrkdwn, toTelegramHtml } from '../../src/delivery/chat-markdown.js';
import { codeBlock, codeSpan, escapeMarkdown } from '../../src/wording/markdown.js';
import { parseTelegramHtml } from '../fakes/telegram-html.js';

/** A small deterministic generator, so a failure is the same on every run. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

const ALPHABET = [
  'a',
  'b',
  ' ',
  '\n',
  '*',
  '_',
  '`',
  '~',
  '[',
  ']',
  '(',
  ')',
  '<',
  '>',
  '&',
  '#',
  '-',
  '+',
  '1',
  '.',
  '|',
  '\\',
  '!',
  '"',
  "'",
  ':',
  '/',
  'http://x.y',
  '&amp;',
  '<b>',
  '```',
  '    ',
  '> ',
  '😀',
];

function text(next: () => number, length: number): string {
  return Array.from({ length }, () => ALPHABET[Math.floor(next() * ALPHABET.length)]).join('');
}

describe('Telegram HTML', () => {
  it('renders bold, italic, code, pre with a language, quotes and safe links; escapes everything else', () => {
    const html = toTelegramHtml(
      '**b** _i_ ~~s~~ `a<b>&c`\n\n```ts\nx < y && z\n```\n> quoted\n\n[ok](https://x.y/?a=1&b=2) [bad](javascript:alert(1)) <div>raw</div>',
    );
    expect(html).toBe(
      '<b>b</b> <i>i</i> <s>s</s> <code>a&lt;b&gt;&amp;c</code>\n\n<pre><code class="language-ts">x &lt; y &amp;&amp; z</code></pre>\n<blockquote>quoted</blockquote>\n\n<a href="https://x.y/?a=1&amp;b=2">ok</a> bad &lt;div&gt;raw&lt;/div&gt;',
    );
    expect(parseTelegramHtml(html).text).toBe('b i s a<b>&c\n\nx < y && z\nquoted\n\nok bad <div>raw</div>');
  });

  it('keeps lines as written: a line right after a list reads as its own line, nested lists stay indented', () => {
    expect(toPlainText('Denied:\n- Bash: `rm x`\nTo allow it, add `mode:acceptEdits`.')).toBe(
      'Denied:\n- Bash: rm x\nTo allow it, add mode:acceptEdits.',
    );
    expect(toPlainText('- one\n  - two\n- three')).toBe('- one\n  - two\n- three');
  });

  it('always produces HTML Telegram accepts, never longer to read than the Markdown, whatever the Markdown', () => {
    const next = random(7);
    for (let i = 0; i < 400; i++) {
      const markdown = text(next, 1 + Math.floor(next() * 80));
      const parsed = parseTelegramHtml(toTelegramHtml(markdown));
      expect(parsed.text.length, JSON.stringify(markdown)).toBeLessThanOrEqual(markdown.length);
    }
  });
});

describe('escapeMarkdown', () => {
  it('makes any outside text literal: every renderer shows it exactly as it was', () => {
    const next = random(11);
    for (let i = 0; i < 400; i++) {
      const outside = text(next, 1 + Math.floor(next() * 60)).replace(/\n/g, ' ');
      const markdown = escapeMarkdown(outside);
      // Leading and trailing spaces of a paragraph are not text in Markdown.
      expect(toPlainText(markdown).trim(), JSON.stringify(outside)).toBe(outside.replace(/^[ \t]+/, '').trim());
      expect(parseTelegramHtml(toTelegramHtml(markdown)).text, JSON.stringify(outside)).toBe(toPlainText(markdown));
    }
  });

  it('leaves words, paths and run ids alone', () => {
    expect(escapeMarkdown('/home/me/my_app hr_0123456789ab snake_case')).toBe(
      '/home/me/my_app hr_0123456789ab snake_case',
    );
    expect(escapeMarkdown('<!channel> *x* [a](b) - item')).toBe('\\<!channel\\> \\*x\\* \\[a\\](b) - item');
  });
});

describe('code', () => {
  it('a code span or block holds any text, backticks included', () => {
    expect(toPlainText(codeSpan('a `b` c'))).toBe('a `b` c');
    expect(toPlainText(codeBlock('x\n```\ny'))).toBe('x\n```\ny');
    const stat = ' a.ts | 2 +-\n b<c>.ts | 1 +';
    expect(parseTelegramHtml(toTelegramHtml(codeBlock(stat)))).toEqual({
      text: stat,
      entities: [{ type: 'pre', offset: 0, length: stat.length }],
    });
  });
});

describe('Slack mrkdwn', () => {
  it('bold, italic, strike, code and links in Slack’s marks; &, < and > escaped so nothing mentions anyone', () => {
    expect(toSlackMrkdwn('**b** _i_ ~~s~~ `<@U1>` <!channel> & [l](https://x.y/?a|b)')).toBe(
      '*b* _i_ ~s~ `&lt;@U1&gt;` &lt;!channel&gt; &amp; <https://x.y/?a%7Cb|l>',
    );
    expect(toSlackMrkdwn('```\na < b\n```')).toBe('```\na &lt; b\n```');
  });
});
