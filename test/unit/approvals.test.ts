import { describe, expect, it } from 'vitest';
import { callbackData, parseCallbackData } from '../../src/channels/telegram/adapter.js';
import { parseCommand } from '../../src/dispatch/command.js';
import { approvalButtons, approvalKind, describeKind, describeToolCall, MAX_APPROVAL_INPUT_CHARS } from '../../src/harness/approvals.js';

describe('what "Allow for this run" covers (approvalKind)', () => {
  it('a simple Bash command: the same program', () => {
    expect(approvalKind('Bash', { command: 'npm test -- --run' })).toBe('Bash:npm');
    expect(approvalKind('Bash', { command: '  npm install left-pad' })).toBe('Bash:npm');
    expect(describeKind('Bash:npm')).toBe('every `npm …` command');
  });
  it('a Bash command with shell syntax that chains or redirects: only that exact command', () => {
    for (const command of ['npm test && rm -rf /', 'ls; rm x', 'echo $(id)', 'cat a | sh', 'printf x > f', 'a\nb', 'echo `id`']) {
      expect(approvalKind('Bash', { command })).toBe(`Bash=${command.trim()}`);
    }
    expect(describeKind('Bash=ls; rm x')).toBe('this exact command');
  });
  it('whitespace bash does not split words on (NBSP, CR, VT, FF): only that exact command (attack pass)', () => {
    // bash splits words on space and tab only: `./build.sh\u00a0x` runs a program of that name,
    // which must not pass as one more `./build.sh …` command.
    for (const command of ['./build.sh\u00a0x', 'npm\rtest', 'npm\vx', 'npm\fx', 'npm\u2003x']) {
      expect(approvalKind('Bash', { command })).toBe(`Bash=${command}`);
    }
    expect(approvalKind('Bash', { command: 'npm\ttest' })).toBe('Bash:npm');
  });
  it('any other tool: the same tool', () => {
    expect(approvalKind('Edit', { file_path: '/r/a.ts' })).toBe('Edit');
    expect(approvalKind('mcp__srv__tool', {})).toBe('mcp__srv__tool');
  });
});

describe('the tool call as the owner reads it', () => {
  it('Bash: the command line; Edit: the path and a diff; Write: the path and the new lines', () => {
    expect(describeToolCall('Bash', { command: 'git push --force' })).toBe('$ git push --force');
    expect(describeToolCall('Edit', { file_path: '/r/a.ts', old_string: 'a\nb', new_string: 'c' })).toBe('/r/a.ts\n- a\n- b\n+ c');
    expect(describeToolCall('Write', { file_path: '/r/n.md', content: 'x\ny' })).toBe('/r/n.md\n+ x\n+ y');
  });
  it('cuts a long input with a note', () => {
    const text = describeToolCall('Bash', { command: 'x'.repeat(10_000) });
    expect(text.length).toBeLessThan(MAX_APPROVAL_INPUT_CHARS + 100);
    expect(text).toMatch(/… \(\d+ more characters; \/runs shows the request\)$/);
  });
});

describe('buttons on Telegram', () => {
  it('callback_data round-trips and stays within 64 bytes for baton ids', () => {
    for (const button of [...approvalButtons(9_007_199_254_740_991), { action: 'extend', arg: 'hr_0123456789ab' }]) {
      const data = callbackData(button.action, button.arg);
      expect(Buffer.byteLength(data)).toBeLessThanOrEqual(64);
      expect(parseCallbackData(data)).toEqual({ action: button.action, arg: button.arg });
    }
  });
  it('refuses callback_data over 64 bytes as malformed', () => {
    expect(() => callbackData('redeliver', '9'.repeat(60))).toThrow(expect.objectContaining({ kind: 'malformed' }));
  });
});

describe('commands', () => {
  it('approve is a claude launch option; codex refuses it with the reason', () => {
    expect(parseCommand('/claude approve progress fix it')).toMatchObject({ options: { approve: true, progress: true }, task: 'fix it' });
    expect(() => parseCommand('/codex approve fix it')).toThrow(/`codex exec` has no approval channel/);
  });
  it('/redeliver takes a dead letter number, with or without #', () => {
    expect(parseCommand('/redeliver #42')).toEqual({ kind: 'redeliver', deliveryId: '42' });
    expect(() => parseCommand('/redeliver')).toThrow(/needs a dead letter/);
  });
});
