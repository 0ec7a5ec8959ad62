/** The open input of a CLI that takes more messages on stdin: when a steer is written, when stdin closes. */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { followTurns } from '../../../src/harness/run/turns.js';
import { claudeVendor } from '../../../src/harness/vendors/claude.js';
import { waitFor } from '../../support/wait.js';

const turns = claudeVendor.stdinTurns!;
const init = { type: 'system', subtype: 'init', session_id: 's' };
const result = { type: 'result', subtype: 'success', is_error: false };

/** A stdin stand-in that keeps what was written and whether it was ended. */
function stdin() {
  const stream = new PassThrough();
  const lines: string[] = [];
  let ended = false;
  stream.on('data', (chunk: Buffer) => lines.push(...chunk.toString().split('\n').filter(Boolean)));
  stream.on('finish', () => {
    ended = true;
  });
  return { stream, lines, ended: () => ended };
}

describe('followTurns', () => {
  it('closes stdin when a turn ends with nothing written since it began; a later steer reaches no turn', async () => {
    const input = stdin();
    let closed = 0;
    const followed = followTurns(input.stream, turns, 60_000, () => closed++);
    followed.onEvent(init);
    followed.onEvent(result);
    await waitFor(input.ended, { what: 'stdin to end' });
    expect(closed).toBe(1);
    expect(followed.open()).toBe(false);
    expect(followed.steer('too late')).toBe('ended');
    expect(input.lines).toEqual([]);
  });

  it('writes a steer as one stream-json user message and keeps stdin open for the turn it makes', async () => {
    const input = stdin();
    let closed = 0;
    const followed = followTurns(input.stream, turns, 60_000, () => closed++);
    followed.onEvent(init);
    expect(followed.steer('also do X')).toBe('added');
    expect(followed.steer('and Y')).toBe('added');
    followed.onEvent(result);
    expect(followed.open()).toBe(true);
    // One next turn takes both messages (as claude 2.1.332 does), then ends.
    followed.onEvent(init);
    followed.onEvent(result);
    await waitFor(input.ended, { what: 'stdin to end' });
    expect(closed).toBe(1);
    expect(input.lines.map((line) => JSON.parse(line) as unknown)).toEqual([
      { type: 'user', message: { role: 'user', content: [{ type: 'text', text: 'also do X' }] } },
      { type: 'user', message: { role: 'user', content: [{ type: 'text', text: 'and Y' }] } },
    ]);
  });

  it('closes stdin when no next turn begins after a turn that a steer was written in', async () => {
    const input = stdin();
    let closed = 0;
    const followed = followTurns(input.stream, turns, 50, () => closed++);
    followed.onEvent(init);
    followed.steer('taken into this turn after all');
    followed.onEvent(result);
    await waitFor(input.ended, { what: 'stdin to end without a next turn' });
    expect(closed).toBe(1);
  });

  it('closes without the callback when the run is stopped', async () => {
    const input = stdin();
    let closed = 0;
    const followed = followTurns(input.stream, turns, 60_000, () => closed++);
    followed.close();
    await waitFor(input.ended, { what: 'stdin to end' });
    expect(closed).toBe(0);
    expect(followed.steer('after the stop')).toBe('ended');
  });
});
