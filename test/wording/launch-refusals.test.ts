import { describe, expect, it } from 'vitest';
import { BatonError } from '../../src/core/errors.js';
import { maxActiveRefusal, worktreeBusyRefusal } from '../../src/store/run-store/refusals.js';
import { launchRefusalText, wordLaunchRefusal } from '../../src/wording/launch-refusals.js';

describe('launch refusal wording', () => {
  it('words each refusal the store raises', () => {
    expect(launchRefusalText({ code: 'max_active', scope: 'node', limit: 1 })).toBe(
      '1 coding run is already active (max_active = 1). Wait for one to finish, /cancel one, or raise [harness] max_active and restart.',
    );
    expect(launchRefusalText({ code: 'max_active', scope: 'fleet', limit: 2 })).toBe(
      '2 coding runs are already active across the fleet (fleet_max_active = 2). Wait for one to finish, /cancel one, or raise [node] fleet_max_active on every node and restart them.',
    );
    expect(launchRefusalText({ code: 'worktree_busy', worktreeRoot: '/r', runId: 'hr_1' })).toBe(
      'Another run is active in /r (hr_1). Wait for it to finish or /cancel it.',
    );
    expect(launchRefusalText({ code: 'queue_full', limit: 2 })).toBe(
      '2 runs are already queued in this conversation (max_queued = 2). Wait for one to start, /cancel one, or raise [harness] max_queued and restart.',
    );
    expect(launchRefusalText({ code: 'duplicate_inbound' })).toBe('This message was already acted on.');
  });

  it('rewords a store refusal and keeps its code and details', () => {
    const worded = wordLaunchRefusal(worktreeBusyRefusal('/r'));
    expect(worded).toMatchObject({
      code: 'worktree_busy',
      message: 'Another run is active in /r. Wait for it to finish or /cancel it.',
      details: { worktreeRoot: '/r' },
    });
    expect(wordLaunchRefusal(maxActiveRefusal(3))).toMatchObject({
      message: expect.stringContaining('3 coding runs are'),
    });
    const other = new BatonError('usage', 'x');
    expect(wordLaunchRefusal(other)).toBe(other);
  });
});
