/**
 * Claims on pressed messages (`button_presses`) and the delivery a pressed message belongs to:
 * the first press of a message's buttons claims it in the database, so two presses of one card
 * (a double tap, two processes) act once.
 */
import { and, eq, sql } from 'drizzle-orm';
import type { Db } from './database.js';
import { buttonPresses, deliveries, type DeliveryRow } from './schema.js';

/** Which message a press is under. */
export interface PressedMessage {
  platform: string;
  chatId: string;
  messageId: string;
}

/** The first press of a message, as recorded. */
export type PressClaim = typeof buttonPresses.$inferSelect;

/** The press-claims repository: the only module that writes `button_presses`. */
export class PressClaims {
  constructor(private readonly db: Db) {}

  /**
   * Claims `message` for this press.
   *
   * @returns undefined when this press claimed it; else the earlier claim (its answer, once known).
   */
  async claim(
    message: PressedMessage,
    press: { action: string; arg: string; pressedBy: string },
    now: Date,
  ): Promise<PressClaim | undefined> {
    const [created] = await this.db
      .insert(buttonPresses)
      .values({ ...message, ...press, pressedAt: now })
      .onConflictDoNothing()
      .returning();
    if (created) return undefined;
    const [existing] = await this.db.select().from(buttonPresses).where(this.key(message)).limit(1);
    // Released between the two statements: this press may try again.
    return existing ?? this.claim(message, press, now);
  }

  /** Records the answer the claiming press got, told to any later press. */
  async answered(message: PressedMessage, answer: string): Promise<void> {
    await this.db.update(buttonPresses).set({ answer }).where(this.key(message));
  }

  /** Gives a claim back (its action was refused; a later press may act). */
  async release(message: PressedMessage): Promise<void> {
    await this.db.delete(buttonPresses).where(this.key(message));
  }

  /** The delivery whose sent parts include `message`, or undefined. */
  async deliveryOf(message: PressedMessage): Promise<DeliveryRow | undefined> {
    const [row] = await this.db
      .select()
      .from(deliveries)
      .where(
        and(
          sql`${deliveries.target}->>'platform' = ${message.platform}`,
          sql`${deliveries.target}->>'chatId' = ${message.chatId}`,
          sql`${deliveries.platformMessageIds} @> ${JSON.stringify([message.messageId])}::jsonb`,
        ),
      )
      .limit(1);
    return row;
  }

  private key(message: PressedMessage) {
    return and(
      eq(buttonPresses.platform, message.platform),
      eq(buttonPresses.chatId, message.chatId),
      eq(buttonPresses.messageId, message.messageId),
    );
  }
}
