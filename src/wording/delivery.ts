/** The sentences the delivery loop adds of its own, beside what it delivers. */
import { runTag } from './run-tag.js';

/** What the chat's top level is told first when a thread's messages come there instead. */
export function closedThreadNote(runId: string | null): string {
  return `${runId ? `${runTag(runId)} ` : ''}The forum topic this conversation is in is closed, so its messages come here, to the General topic.`;
}
