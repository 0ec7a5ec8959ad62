/**
 * Slack text cut into Block Kit section texts (Block Kit "Section block": `text` of at most 3,000
 * characters). The text is already escaped, so a cut must never fall inside `&amp;`, `&lt;` or
 * `&gt;` (Slack would show the pieces); in mrkdwn a cut inside a ``` block closes it at the end
 * of its section and opens it again in the next, so each section renders on its own.
 */

/** Longest section text Slack takes, in characters. */
export const SLACK_SECTION_TEXT_MAX = 3000;

const FENCE = '```';

/**
 * Cuts escaped Slack text into pieces of at most `maxLength` characters: after a newline where one
 * falls in the second half of the window, else hard, never inside an entity or a surrogate pair.
 *
 * @param mrkdwn - the text is mrkdwn: keep ``` code blocks paired in every piece.
 */
export function splitSlackSections(text: string, mrkdwn: boolean, maxLength = SLACK_SECTION_TEXT_MAX): string[] {
  if (text.length === 0) return [' '];
  const pieces: string[] = [];
  let rest = text;
  let inCode = false;
  while (rest.length > 0) {
    const open = inCode ? `${FENCE}\n` : '';
    const room = maxLength - open.length;
    if (rest.length <= room) {
      pieces.push(open + rest);
      break;
    }
    // Room for the closing fence, should the cut fall inside a code block.
    const cut = cutAt(rest, mrkdwn ? room - (FENCE.length + 1) : room);
    const piece = rest.slice(0, cut);
    if (mrkdwn && countFences(piece) % 2 === 1) inCode = !inCode;
    pieces.push(open + piece + (mrkdwn && inCode ? `${piece.endsWith('\n') ? '' : '\n'}${FENCE}` : ''));
    rest = rest.slice(cut);
  }
  return pieces;
}

function cutAt(text: string, max: number): number {
  const newline = text.lastIndexOf('\n', max - 1) + 1;
  if (newline > max / 2) return newline;
  let cut = max;
  // An entity is at most 5 characters (`&amp;`): step back to its `&` if the cut is inside one.
  const amp = text.lastIndexOf('&', cut - 1);
  if (amp !== -1 && cut - amp < 5 && /^&(amp|lt|gt);/.test(text.slice(amp, amp + 5))) {
    if (amp + text.slice(amp, amp + 5).indexOf(';') + 1 > cut) cut = amp;
  }
  const code = text.charCodeAt(cut - 1);
  if (code >= 0xd800 && code <= 0xdbff) cut -= 1;
  return cut;
}

function countFences(text: string): number {
  return text.split(FENCE).length - 1;
}
