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
