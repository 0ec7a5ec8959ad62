/** The words of a verification: the headline, the outcome's lines, and the task a Fix gives. */
import { describe, expect, it } from 'vitest';
import { fixTask, verificationLines } from '../../src/wording/verification.js';
import { outcomeText } from '../../src/wording/runs.js';
import type { VerificationJson } from '../../src/types/run-facts.js';

const run = {
  id: 'hr_0123456789ab',
  vendor: 'codex' as const,
  cwd: '/repo',
  createdAt: new Date('2026-11-30T10:00:00Z'),
  options: { verify: { commands: ['npm test'], timeoutMinutes: 15, source: 'config' as const } },
};
const endedAt = new Date('2026-11-30T10:01:05Z');
const failed: VerificationJson = {
  reason: 'verify_failed',
  command: 'npm test',
  ran: 1,
  exitCode: 1,
  durationMs: 3200,
  tail: '✗ adds numbers\nexpected 3, got 4',
};

describe('verification words', () => {
  it('heads a completed run with its verification, and shows the failing command, exit and tail', () => {
    const text = outcomeText({
      run,
      status: 'completed',
      reason: null,
      endedAt,
      finalMessage: 'Done.',
      verification: failed,
    });
    expect(text.split('\n')[0]).toBe(
      '[run hr_0123456789ab] completed · verification failed (exit 1) · codex · /repo · 1m 05s',
    );
    expect(text).toContain('Verification failed: `npm test` exited 1 · 3s');
    expect(text).toContain('expected 3, got 4');
    expect(text).toContain('Press Fix');
    const verified = outcomeText({
      run,
      status: 'completed',
      reason: null,
      endedAt,
      verification: { reason: 'verified', command: 'npm test', ran: 1, exitCode: 0, durationMs: 800 },
    });
    expect(verified.split('\n')[0]).toMatch(/^\[run hr_0123456789ab\] completed · verified · codex · /);
    expect(verified).toContain('Verified: `npm test` passed');
  });

  it('says why a verification could not run, and offers no fix for it', () => {
    const lines = verificationLines(
      {
        reason: 'verify_not_run',
        command: 'npm test',
        ran: 1,
        exitCode: null,
        durationMs: 5,
        why: 'ENOENT spawn /bin/sh ENOENT',
      },
      15,
    );
    expect(lines).toContain('could not be started (ENOENT spawn /bin/sh ENOENT)');
    expect(lines).not.toContain('Fix');
  });

  it('hands the agent the command, how it failed and its output', () => {
    const task = fixTask(failed);
    expect(task).toContain('`npm test` exited with code 1');
    expect(task).toContain('expected 3, got 4');
    expect(fixTask({ ...failed, reason: 'verify_timeout', exitCode: null })).toContain(
      'did not finish within its time limit',
    );
  });
});
