/**
 * Which messages do not wait for their conversation's earlier messages: `/stop` and `/cancel …`
 * (button presses never wait either). An earlier message may take long to handle (a launch
 * downloading its files); the owner's way to stop things must be answered meanwhile.
 */
import { PLATFORM_ABILITIES, type InboundMessage } from '../channels/types.js';
import { parseCommand } from './command.js';

/** Whether `message` is handled at once, ahead of its conversation's earlier messages still being handled. */
export function overtakesConversation(message: Pick<InboundMessage, 'platform' | 'text'>): boolean {
  try {
    const command = parseCommand(message.text, PLATFORM_ABILITIES[message.platform].bareCommands);
    return command.kind === 'stop' || command.kind === 'cancel';
  } catch {
    return false;
  }
}
