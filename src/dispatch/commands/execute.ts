/** Runs one parsed command: the switch over the command kinds, one handler a file. */
import type { InboundMessage } from '../../channels/types.js';
import type { Command } from '../command.js';
import type { DispatchContext } from '../context.js';
import type { DispatchResult } from '../deps.js';
import type { Role } from '../trust.js';
import { cancelCommand } from './cancel.js';
import { doctorCommand } from './doctor.js';
import { helpCommand } from './help.js';
import { launchCommand } from './launch.js';
import { newCommand } from './new.js';
import { redeliverCommand } from './redeliver.js';
import { runsCommand } from './runs.js';
import { scheduleCommand } from './schedule.js';
import { stopCommand } from './stop.js';
import { textCommand } from './text.js';
import { unknownCommand } from './unknown.js';
import { useCommand } from './use.js';
import { whoamiCommand } from './whoami.js';

/**
 * Runs `command` for `message`, whose sender was already allowed to (see act.ts).
 *
 * @throws BatonError for a refusal the caller words; the store's errors.
 */
export async function execute(
  ctx: DispatchContext,
  command: Command,
  message: InboundMessage,
  role: Role,
): Promise<DispatchResult> {
  switch (command.kind) {
    case 'whoami':
      return whoamiCommand(ctx, message, role);
    case 'help':
      return helpCommand(ctx, message);
    case 'launch':
      return launchCommand(ctx, command, message);
    case 'runs':
      return runsCommand(ctx, command, message);
    case 'redeliver':
      return redeliverCommand(ctx, command, message);
    case 'cancel':
      return cancelCommand(ctx, command, message);
    case 'stop':
      return stopCommand(ctx, message);
    case 'new':
      return newCommand(ctx, message);
    case 'use':
      return useCommand(ctx, command, message);
    case 'doctor':
      return doctorCommand(ctx, message);
    case 'schedule':
      return scheduleCommand(ctx, command, message);
    case 'unknown':
      return unknownCommand(ctx, message);
    case 'text':
      return textCommand(ctx, command, message, role);
  }
}
