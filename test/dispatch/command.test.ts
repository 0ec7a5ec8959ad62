import { describe, expect, it } from 'vitest';
import { parseCommand, parseReplyOptions } from '../../src/dispatch/command.js';

describe('parseCommand', () => {
  it('parses a launch with options before the task', () => {
    expect(
      parseCommand('/codex in:app timeout:45 model:gpt-5 progress sandbox:read-only fix the  test\nplease'),
    ).toEqual({
      kind: 'launch',
      vendor: 'codex',
      options: { in: 'app', timeoutMinutes: 45, model: 'gpt-5', progress: true, posture: 'read-only' },
      task: 'fix the  test\nplease',
    });
  });

  it('parses the spending caps budget:USD, turns:N and tokens:N (with k/M)', () => {
    expect(parseCommand('/claude budget:2.50 turns:20 tokens:200k fix it')).toMatchObject({
      options: { budgetUsd: 2.5, maxTurns: 20, maxTokens: 200_000 },
      task: 'fix it',
    });
    expect(parseCommand('/run budget:$0.5 fix it')).toMatchObject({ options: { budgetUsd: 0.5 } });
    expect(parseCommand('/codex tokens:1.5M fix it')).toMatchObject({ options: { maxTokens: 1_500_000 } });
    expect(parseCommand('/codex tokens:1200 fix it')).toMatchObject({ options: { maxTokens: 1200 } });
  });

  it.each([
    ['/claude budget:0 x', /^budget: takes US dollars above 0/],
    ['/claude budget:abc x', /^budget: takes US dollars above 0/],
    ['/claude budget:20000 x', /^budget: takes US dollars above 0 and at most 10000/],
    ['/claude turns:0 x', /^turns: takes a whole number of turns from 1/],
    ['/claude turns:2.5 x', /^turns: takes a whole number/],
    ['/codex tokens:0 x', /^tokens: takes a whole number of tokens/],
    ['/codex tokens:1.5 x', /^tokens: takes a whole number of tokens/],
    ['/codex tokens:5g x', /^tokens: takes a whole number of tokens/],
    ['/codex budget:1 x', /^budget: is a claude option: codex reports tokens, not dollars/],
    ['/codex turns:3 x', /^turns: is a claude option: codex has no turn limit/],
    [
      '/claude sandbox:read-only x',
      /^sandbox: is a codex option; claude takes mode:default\|manual\|acceptEdits\|auto\|dontAsk\|plan\.$/,
    ],
    ['/codex mode:plan x', /^mode: is a claude option; codex takes sandbox:read-only\|workspace-write\.$/],
  ])('refuses %s with a usage error that says the fix', (text, message) => {
    expect(() => parseCommand(text)).toThrow(
      expect.objectContaining({ code: 'usage', message: expect.stringMatching(message) }),
    );
  });

  it('collects verify:"CMD" options in order, quoted with spaces, as the run\'s verify commands', () => {
    expect(parseCommand('/codex verify:"npm test" verify:“npm run lint -- --max-warnings 0” fix it')).toMatchObject({
      options: { verify: ['npm test', 'npm run lint -- --max-warnings 0'] },
      task: 'fix it',
    });
    expect(parseReplyOptions('verify:"make check" try again', 'codex')).toMatchObject({
      options: { verify: ['make check'] },
      task: 'try again',
    });
    expect(() => parseCommand('/codex verify: fix it')).toThrow(expect.objectContaining({ code: 'usage' }));
  });

  it('takes a double-quoted option value with spaces', () => {
    expect(parseCommand('/codex in:"/home/me/my project" progress fix it')).toMatchObject({
      options: { in: '/home/me/my project', progress: true },
      task: 'fix it',
    });
  });

  it.each([
    ['“/home/me/my project”', 'iOS smart quotes'],
    ['”/home/me/my project”', 'two closing marks'],
    ['„/home/me/my project“', 'German'],
    ['‘/home/me/my project’', 'single smart quotes'],
    ['«/home/me/my project»', 'guillemets'],
    ['»/home/me/my project«', 'Danish guillemets'],
  ])('reads %s (%s) like a double-quoted value', (quoted) => {
    expect(parseCommand(`/codex in:${quoted} timeout:5 fix “this” now`)).toMatchObject({
      options: { in: '/home/me/my project', timeoutMinutes: 5 },
      task: 'fix “this” now',
    });
  });

  it('keeps a quote that closes nothing as part of the value', () => {
    expect(parseCommand('/codex in:“/a b fix it')).toMatchObject({ options: { in: '“/a' }, task: 'b fix it' });
    expect(parseCommand('/codex in:"a"b fix it')).toMatchObject({ options: { in: '"a"b' }, task: 'fix it' });
  });

  it('takes a quoted /use target without its quotes', () => {
    expect(parseCommand('/use “/home/me/my project”')).toEqual({ kind: 'use', target: '/home/me/my project' });
    expect(parseCommand('/use "/home/me/my project"')).toEqual({ kind: 'use', target: '/home/me/my project' });
    expect(parseCommand('/use app')).toEqual({ kind: 'use', target: 'app' });
  });

  it('stops reading options at the first word that is not one', () => {
    expect(parseCommand('/run explain in:app')).toMatchObject({
      vendor: 'default',
      options: { progress: false },
      task: 'explain in:app',
    });
  });

  it.each([
    ['/codex', 'usage'],
    ['/codex in:app', 'usage'],
    ['/codex timeout:0 x', 'usage'],
    ['/codex timeout:241 x', 'usage'],
    ['/codex timeout:1.5 x', 'usage'],
    ['/codex in: x', 'usage'],
    ['/codex mode:plan x', 'usage'],
    ['/claude sandbox:read-only x', 'usage'],
    ['/cancel', 'usage'],
  ])('refuses %j with %s', (text, code) => {
    expect(() => parseCommand(text)).toThrow(expect.objectContaining({ code }));
  });

  it('recognizes the other commands', () => {
    expect(parseCommand('/whoami')).toEqual({ kind: 'whoami' });
    expect(parseCommand('/help')).toEqual({ kind: 'help' });
    expect(parseCommand('/runs')).toEqual({ kind: 'runs' });
    expect(parseCommand('/runs hr_0123456789ab')).toEqual({ kind: 'runs', runId: 'hr_0123456789ab' });
    expect(parseCommand('/cancel hr_0123456789ab')).toEqual({ kind: 'cancel', runId: 'hr_0123456789ab' });
    expect(parseCommand('/stop')).toEqual({ kind: 'stop' });
    expect(parseCommand('/frobnicate')).toEqual({ kind: 'unknown', name: 'frobnicate' });
  });

  it('treats text without a slash as text unless bare commands are allowed', () => {
    expect(parseCommand('codex fix it')).toEqual({ kind: 'text', text: 'codex fix it' });
    expect(parseCommand('codex fix it', true)).toMatchObject({ kind: 'launch', vendor: 'codex', task: 'fix it' });
    expect(parseCommand('hello there', true)).toEqual({ kind: 'text', text: 'hello there' });
  });
});

describe('parseCommand: unknown options', () => {
  it.each([
    ['/codex timout:5 fix it', /^Unknown option timout:\. Did you mean "timeout:"\?/],
    ['/codex tokns:8k fix it', /^Unknown option tokns:\. Did you mean "tokens:"\?/],
    ['/codex Timeout:5 fix it', /^Unknown option Timeout:\. Did you mean "timeout:"\?/],
    // An unknown word no longer ends the options silently: the in: after it would become task text.
    ['/codex frobnicate:yes in:app fix it', /^Unknown option frobnicate:\. Options are in:, timeout:/],
    ['/codex in:app modell:gpt-5 fix it', /^Unknown option modell:\. Did you mean "model:"\?/],
  ])('refuses %s with a did-you-mean', (text, message) => {
    expect(() => parseCommand(text)).toThrow(
      expect.objectContaining({ code: 'usage', message: expect.stringMatching(message) }),
    );
  });

  it.each([
    ['/codex fix: the bug', 'fix: the bug'],
    ['/codex in:app fix: the bug', 'fix: the bug'],
    ['/codex http://example.com/a is down', 'http://example.com/a is down'],
    ['/codex https://example.com:8080/x fails', 'https://example.com:8080/x fails'],
    ['/codex file:///etc/hosts explain', 'file:///etc/hosts explain'],
    ['/codex C:thing explain', 'C:thing explain'],
    ['/codex 10:30 meeting notes', '10:30 meeting notes'],
    ['/codex explain timout:5 later', 'explain timout:5 later'],
    ['/codex see: http://x', 'see: http://x'],
  ])('keeps %s as task text', (text, task) => {
    expect(parseCommand(text)).toMatchObject({ kind: 'launch', task });
  });
});

describe('parseReplyOptions', () => {
  it('reads the options a reply begins with, as a command does', () => {
    expect(parseReplyOptions('tokens:8k continue', 'codex')).toEqual({
      options: { progress: false, maxTokens: 8000 },
      task: 'continue',
    });
    expect(parseReplyOptions('timeout:30 model:gpt-5 go on', 'codex')).toEqual({
      options: { progress: false, timeoutMinutes: 30, model: 'gpt-5' },
      task: 'go on',
    });
    expect(parseReplyOptions('budget:2 turns:5 go on', 'claude')).toMatchObject({
      options: { budgetUsd: 2, maxTurns: 5 },
      task: 'go on',
    });
  });

  it('keeps prose as it is: bare words, a colon after a word, URLs', () => {
    expect(parseReplyOptions('progress is slow, speed it up', 'codex')).toEqual({
      options: { progress: false },
      task: 'progress is slow, speed it up',
    });
    expect(parseReplyOptions('fix: the bug', 'codex')).toMatchObject({ task: 'fix: the bug' });
    expect(parseReplyOptions('http://x.test/a fails', 'codex')).toMatchObject({ task: 'http://x.test/a fails' });
  });

  it.each([
    ['timout:5 go on', 'codex', /^Unknown option timout:\. Did you mean "timeout:"\?/],
    ['in:app go on', 'codex', /^in: cannot change on a resume/],
    ['tokens:8k', 'codex', /needs a task/],
    ['budget:2 go on', 'codex', /^budget: is a claude option/],
  ] as const)('refuses %s', (text, vendor, message) => {
    expect(() => parseReplyOptions(text, vendor)).toThrow(
      expect.objectContaining({ code: 'usage', message: expect.stringMatching(message) }),
    );
  });
});

describe('schedule commands', () => {
  it('reads the schedule commands with their slash', () => {
    expect(parseCommand('/every hour /codex x')).toEqual({ kind: 'schedule', verb: 'every', rest: 'hour /codex x' });
    expect(parseCommand('/at +30m /codex x')).toEqual({ kind: 'schedule', verb: 'at', rest: '+30m /codex x' });
    expect(parseCommand('/schedules')).toEqual({ kind: 'schedule', verb: 'list', rest: '' });
    expect(parseCommand('/pause s_0123abcd')).toEqual({ kind: 'schedule', verb: 'pause', rest: 's_0123abcd' });
    expect(() => parseCommand('/unschedule')).toThrow(expect.objectContaining({ code: 'usage' }));
  });

  it('without the slash, reads only what has a schedule command’s shape; prose stays text', () => {
    expect(parseCommand('every hour codex x', true)).toMatchObject({ kind: 'schedule', verb: 'every' });
    expect(parseCommand('resume s_0123abcd', true)).toMatchObject({ kind: 'schedule', verb: 'resume' });
    expect(parseCommand('resume the work where you stopped', true)).toEqual({
      kind: 'text',
      text: 'resume the work where you stopped',
    });
    expect(parseCommand('at noon we look at it', true)).toMatchObject({ kind: 'text' });
    expect(parseCommand('pause', true)).toMatchObject({ kind: 'text' });
  });
});
