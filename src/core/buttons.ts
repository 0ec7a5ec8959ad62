/**
 * One button under a message: the label the platform shows, and what a press asks
 * for (`action` with its argument, e.g. `stop` + a run id, `approve` + an approval id). Channels
 * render it with their own widget (Telegram inline keyboard, Slack Block Kit button, Discord
 * component) and carry `action` and `arg` back in the press.
 */
export interface ButtonJson {
  label: string;
  action: string;
  arg: string;
}

/**
 * The action of the Fix button under a completed run whose verification failed: the run's
 * session is resumed with the failure as its task.
 */
export const FIX_ACTION = 'fix';
