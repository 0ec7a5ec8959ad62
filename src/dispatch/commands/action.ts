/** Which trust a command needs. */
import type { Command } from '../command.js';
import type { Action } from '../trust.js';

/** The action a command performs, for {@link mayPerform} (see trust.ts). */
export function actionOf(command: Command): Action {
  switch (command.kind) {
    case 'launch':
    case 'cancel':
    case 'stop':
    case 'new':
    case 'redeliver':
    case 'use':
    case 'doctor':
      return 'launch';
    case 'runs':
    case 'help':
    case 'unknown':
      return 'read';
    case 'whoami':
      return 'whoami';
    case 'schedule':
      return command.verb === 'list' ? 'read' : 'launch';
    case 'text':
      return 'read';
  }
}
