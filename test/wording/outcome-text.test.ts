import { describe, expect, it } from 'vitest';
import { toPlainText } from '../../src/delivery/chat-markdown.js';
import { outcomeText } from '../../src/wording/runs.js';
import { classifyExit } from '../../src/harness/outcome.js';

const run = {
  id: 'hr_0123456789ab',
  vendor: 'claude' as const,
  cwd: '/repo',
  createdAt: new Date('2026-11-30T10:00:00Z'),
};
const endedAt = new Date('2026-11-30T10:01:05Z');
const longMessage = Array.from({ length: 12 }, (_, i) => `line ${i + 1} of what the agent said`).join('\n');

describe('outcome text', () => {
  it.each([
    ['failed', 'timeout', 'Timed out: the run reached its wall-clock limit and was stopped.'],
    [
      'interrupted',
      'shutdown',
      'baton was stopped while this run was active; the run was stopped and is not relaunched.',
    ],
    ['failed', 'vendor_error', 'API Error: 500 overloaded'],
  ] as const)(
    'a %s/%s run shows the last agent message, labelled and cut to a few lines',
    (status, reason, errorMessage) => {
      const text = outcomeText({ run, status, reason, endedAt, errorMessage, finalMessage: longMessage });
      const lines = text.split('\n');
      expect(lines[1]).toBe(errorMessage);
      expect(lines[2]).toBe(`Reason: ${reason}`);
      expect(lines[3]).toBe('Last agent message:');
      expect(lines.slice(4, 10)).toEqual(
        longMessage
          .split('\n')
          .slice(0, 6)
          .map((l, i) => (i === 5 ? `${l}…` : l)),
      );
      expect(text).not.toContain('line 7 of');
    },
  );

  it("a max_turns failure says so in its reason, with claude's words first", () => {
    const facts = {
      notices: [],
      eventCount: 1,
      terminal: {
        kind: 'failed' as const,
        message: 'Reached maximum number of turns (1)',
        reason: 'max_turns' as const,
      },
    };
    const classified = classifyExit(facts, { exitCode: 1, signal: null, timedOut: false });
    const text = outcomeText({
      run,
      status: 'failed',
      reason: classified.reason,
      endedAt,
      errorMessage: classified.errorMessage,
    });
    expect(text.split('\n').slice(1, 3)).toEqual(['Reached maximum number of turns (1)', 'Reason: max_turns']);
  });

  it('a completed run without denials reads as before: headline, blank line, answer', () => {
    const text = outcomeText({
      run,
      status: 'completed',
      reason: null,
      endedAt,
      finalMessage: 'Done.',
      usage: { inputTokens: 10, cachedInputTokens: 0, outputTokens: 5 },
    });
    expect(text).toBe('[run hr_0123456789ab] completed · claude · /repo · 1m 05s · 15 tokens (10 in, 5 out)\n\nDone.');
  });

  it('names each project instruction file the agent was not given, whatever the status', () => {
    const instructionsNote = '/repo/CLAUDE.md was not given to the agent: it is not a regular file.';
    const done = outcomeText({
      run,
      status: 'completed',
      reason: null,
      endedAt,
      finalMessage: 'Done.',
      instructionsNote,
    });
    expect(done).toBe(`[run hr_0123456789ab] completed · claude · /repo · 1m 05s\n\nDone.\n${instructionsNote}`);
    expect(
      outcomeText({
        run,
        status: 'failed',
        reason: 'vendor_error',
        endedAt,
        instructionsNote,
        processNote: 'p',
      }).endsWith(`\n${instructionsNote}\np`),
    ).toBe(true);
  });

  it('shows what the run changed before the answer, naming the patch file or why there is none', () => {
    const stat = ' a.txt | 1 +\n 1 file changed, 1 insertion(+)';
    const withPatch = outcomeText({
      run,
      status: 'completed',
      reason: null,
      endedAt,
      finalMessage: 'Done.',
      diff: { stat, patchFilename: 'hr_0123456789ab.patch' },
    });
    // Markdown: the stat in a code block, so each platform shows it as written, in monospace.
    expect(withPatch).toBe(
      `[run hr_0123456789ab] completed · claude · /repo · 1m 05s\nChanges (full diff in hr_0123456789ab.patch):\n\`\`\`\n${stat}\n\`\`\`\n\nDone.`,
    );
    expect(toPlainText(withPatch)).toBe(
      `[run hr_0123456789ab] completed · claude · /repo · 1m 05s\nChanges (full diff in hr_0123456789ab.patch):\n${stat}\n\nDone.`,
    );
    const overCap = outcomeText({
      run,
      status: 'cancelled',
      reason: 'owner_cancel',
      endedAt,
      diff: {
        stat,
        patchMissing: 'the full diff is 2048.0 KiB, over [harness] max_patch_kb (1024.0 KiB), so it is not attached',
      },
    });
    expect(toPlainText(overCap)).toContain(
      'Changes (the full diff is 2048.0 KiB, over [harness] max_patch_kb (1024.0 KiB), so it is not attached):\n a.txt | 1 +',
    );
    const failed = outcomeText({
      run,
      status: 'failed',
      reason: 'timeout',
      endedAt,
      errorMessage: 'Timed out.',
      diff: { stat, patchFilename: 'hr_0123456789ab.patch' },
    });
    expect(failed).toContain('Changes (full diff in hr_0123456789ab.patch):');
  });

  it('names the files left out of the patch and how to get them on the machine, a control character escaped', () => {
    const stat = ' .env | 1 +\n 1 file changed, 1 insertion(+)';
    const text = outcomeText({
      run,
      status: 'completed',
      reason: null,
      endedAt,
      finalMessage: 'Done.',
      diff: {
        stat,
        patchFilename: 'hr_0123456789ab.patch',
        leftOut: [
          { path: '.env', why: 'ignored_before' },
          { path: 'a\u202ekey', why: 'secret_content' },
        ],
        includeCommand: 'baton patch hr_0123456789ab --include-ignored',
      },
    });
    // Markdown, as the rest of an outcome: the names in a code block (shown as written), the command inline.
    expect(text).toContain(
      `Changes (full diff in hr_0123456789ab.patch):\n\`\`\`\n${stat}\n\`\`\`\nLeft out of the patch:\n\`\`\`\n.env (ignored before the run)\n"a\\u202ekey" (looks like it holds a secret)\n\`\`\`\nTo get them, on the machine: \`baton patch hr_0123456789ab --include-ignored\`\n\nDone.`,
    );
    expect(toPlainText(text)).toContain(
      'Left out of the patch:\n.env (ignored before the run)\n"a\\u202ekey" (looks like it holds a secret)\nTo get them, on the machine: baton patch hr_0123456789ab --include-ignored',
    );
  });

  it('says how a cancelled agent took being asked to stop, with its last message', () => {
    const asked = (stopAsked: 'stopped' | 'killed', finalMessage: string | null = null) =>
      outcomeText({ run, status: 'cancelled', reason: 'owner_cancel', endedAt, stopAsked, finalMessage });
    expect(asked('stopped', 'Half way through the refactor.')).toBe(
      '[run hr_0123456789ab] cancelled · claude · /repo · 1m 05s\nCancelled by the owner. Nothing will be relaunched.\nAsked to stop, the agent stopped by itself.\nLast agent message:\nHalf way through the refactor.\nA stopped run may have left partial changes: check `git status` before redoing work.',
    );
    expect(asked('killed')).toContain(
      '\nAsked to stop, the agent had not stopped within 5 s, so it was killed.\nA stopped',
    );
    // A cancel that did not ask (codex exec) reads as before.
    expect(outcomeText({ run, status: 'cancelled', reason: 'stop', endedAt, finalMessage: 'x' })).not.toContain(
      'Asked',
    );
  });
});
