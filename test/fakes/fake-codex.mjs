#!/usr/bin/env node
// A stand-in for `codex exec --json` whose behaviour is chosen by the prompt (the last argv
// entry), for harness tests about processes: hangs, floods, crashes, garbage. Real-CLI behaviour
// is covered by the E2E tests with the pinned codex.
import { spawn } from 'node:child_process';

import { existsSync, readFileSync, writeFileSync } from 'node:fs';

const argv = process.argv.slice(2);
let prompt = argv.at(-1) ?? '';
// `-` (as `codex exec -`): a long prompt arrives on stdin; the scenario is its first word.
if (prompt === '-') prompt = readFileSync(0, 'utf8');
const [scenario, arg] = prompt.split(' ');
const emit = (event) => process.stdout.write(`${JSON.stringify(event)}\n`);
const thread = () => emit({ type: 'thread.started', thread_id: 'fake-thread-1' });
const answer = (text) => emit({ type: 'item.completed', item: { id: 'item_1', type: 'agent_message', text } });
const done = () =>
  emit({
    type: 'turn.completed',
    usage: { input_tokens: 10, cached_input_tokens: 0, output_tokens: 5, reasoning_output_tokens: 0 },
  });

switch (scenario) {
  case 'success':
    thread();
    answer('fake done');
    done();
    break;
  case 'fail':
    thread();
    emit({ type: 'error', message: 'Reconnecting... 1/1' });
    emit({ type: 'turn.failed', error: { message: 'fake failure words' } });
    process.exitCode = 1;
    break;
  case 'no-terminal':
    thread();
    answer('half way');
    break;
  case 'garbage':
    thread();
    for (let i = 0; i < Number(arg); i++) process.stdout.write(`not json ${i}\n`);
    answer('after garbage');
    done();
    break;
  case 'bigline': {
    // One event line of `arg` MB, then a normal completion.
    thread();
    process.stdout.write(
      `{"type":"item.completed","item":{"type":"agent_message","text":"${'y'.repeat(Number(arg) * 1024 * 1024)}"}}\n`,
    );
    answer('after the big line');
    done();
    break;
  }
  case 'flood': {
    // `arg` MB of valid events, written with backpressure, then a completion.
    thread();
    const line = `${JSON.stringify({ type: 'item.completed', item: { id: 'f', type: 'reasoning', text: 'z'.repeat(1000) } })}\n`;
    let left = Math.ceil((Number(arg) * 1024 * 1024) / line.length);
    const pump = () => {
      while (left > 0) {
        left -= 1;
        if (!process.stdout.write(line)) return void process.stdout.once('drain', pump);
      }
      answer('flood done');
      done();
    };
    pump();
    break;
  }
  case 'silent':
    setInterval(() => {}, 1000);
    break;
  case 'milestones':
    thread();
    emit({
      type: 'item.started',
      item: { id: 'c1', type: 'command_execution', command: 'npm test', status: 'in_progress' },
    });
    emit({
      type: 'item.completed',
      item: { id: 'c2', type: 'file_change', changes: [{ path: 'src/a.ts', kind: 'update' }], status: 'completed' },
    });
    setTimeout(() => {
      answer('progress done');
      done();
    }, 300);
    break;
  case 'env':
    thread();
    answer(JSON.stringify(process.env));
    done();
    break;
  case 'argv':
    thread();
    answer(JSON.stringify(argv));
    done();
    break;
  case 'write-file':
    // Changes the working tree as soon as it has its task: the run's diff must show the file.
    writeFileSync(arg, 'written by the run\n');
    thread();
    answer('wrote a file');
    done();
    break;
  case 'until-file': {
    // An agent at work until the file at `arg` exists (the test's release), then done.
    thread();
    const wait = setInterval(() => {
      if (!existsSync(arg)) return;
      clearInterval(wait);
      answer('released');
      done();
    }, 20);
    break;
  }
  case 'keep-writing': {
    // An agent at work: changes the file at `arg` until it is stopped.
    thread();
    let n = 0;
    setInterval(() => writeFileSync(arg, `change ${++n}\n`), 20);
    break;
  }
  case 'reconnecting':
    // As codex 0.171.0 prints while it cannot reach its model, then succeeds.
    thread();
    emit({ type: 'error', message: 'Reconnecting... 1/5 (stream disconnected before completion)' });
    emit({ type: 'error', message: 'Reconnecting... 2/5 (stream disconnected before completion)' });
    answer('reached the model at last');
    done();
    break;
  case 'prompt-length':
    thread();
    answer(String(prompt.length));
    done();
    break;
  case 'hang':
  case 'hang-ignore-int': {
    thread();
    if (scenario === 'hang-ignore-int') process.on('SIGINT', () => {});
    // A tool shell in a session of its own, like the real CLIs start: a group signal misses it.
    const tool = spawn('sleep', ['1000'], { detached: true, stdio: 'ignore' });
    tool.unref();
    emit({
      type: 'item.started',
      item: {
        id: 'item_2',
        type: 'command_execution',
        command: 'sleep 1000',
        status: 'in_progress',
        tool_pid: tool.pid,
      },
    });
    setInterval(() => {}, 1000);
    break;
  }
  case 'hang-escape': {
    // A tool that drops both the session and the environment (and with it BATON_RUN_ID). Not
    // detached, so setsid(1) need not fork and the tool's pid is the sleeper's; its unique
    // duration lets a test find it whatever its pid.
    thread();
    const duration = `999.${process.pid}`;
    const tool = spawn('setsid', ['env', '-i', 'sleep', duration], { stdio: 'ignore' });
    tool.unref();
    emit({
      type: 'item.started',
      item: {
        id: 'item_2',
        type: 'command_execution',
        command: `setsid env -i sleep ${duration}`,
        status: 'in_progress',
        tool_pid: tool.pid,
      },
    });
    setInterval(() => {}, 1000);
    break;
  }
  case 'hang-cgroup-nest': {
    // A tool that stays inside the run's cgroup but in a child cgroup it makes there (any process
    // may, in a cgroup its user owns), then drops its session and environment like hang-escape.
    thread();
    const duration = `996.${process.pid}`;
    const own =
      readFileSync('/proc/self/cgroup', 'utf8')
        .split('\n')
        .find((line) => line.startsWith('0::'))
        ?.slice(3)
        .trim() ?? '/';
    const mount =
      readFileSync('/proc/self/mountinfo', 'utf8')
        .split('\n')
        .map((line) => line.split(' - '))
        .find(([, after]) => after?.startsWith('cgroup2 '))?.[0]
        ?.split(' ')[4] ?? '/sys/fs/cgroup';
    const nested = `${mount}${own}/tool`.replace(/\/+/g, '/');
    const script = `mkdir '${nested}' && echo $$ > '${nested}/cgroup.procs' && exec /bin/sleep ${duration}`;
    const tool = spawn('setsid', ['env', '-i', '/bin/sh', '-c', script], { stdio: 'ignore' });
    tool.unref();
    emit({
      type: 'item.started',
      item: { id: 'item_2', type: 'command_execution', command: script, status: 'in_progress', tool_pid: tool.pid },
    });
    setInterval(() => {}, 1000);
    break;
  }
  default:
    process.stderr.write(`fake-codex: unknown scenario ${JSON.stringify(prompt)}\n`);
    process.exitCode = 2;
}
