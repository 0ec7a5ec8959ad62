/** What one delivery row sends, in order: its text parts (as split and re-split) and its files. */
import { LONG_BODY_PARTS, type DeliveryRow, type DocumentJson, type ReshapeJson } from '../store/schema.js';
import { splitMessage, splitWithReshapes } from './split.js';

/**
 * The parts of a delivery as they are (or were) sent: the platform-sized split, then each stored
 * re-split in order, so a retry resumes on the same layout.
 */
export function layoutParts(body: string, maxLength: number, reshapes: readonly ReshapeJson[]): string[] {
  return splitWithReshapes(body, maxLength, reshapes);
}

/**
 * One thing a delivery sends, in order: a text part, or a file. `partsDelivered`
 * counts these items.
 */
export type DeliveryItem =
  | { kind: 'text'; text: string }
  | { kind: 'document'; document: DocumentJson /** Index in the row's `documents`. */; documentIndex: number };

/**
 * What a delivery sends, in order. A body longer than {@link LONG_BODY_PARTS} messages with a
 * `long_body` file that was not refused goes as its first part then that file; otherwise as all
 * its parts. Files used `always` follow the text. Text parts come first, so a text item's index is
 * its part index (the one reshapes name). A refused file drops out of the list and the items
 * after it move up by one, so `partsDelivered` then points at what comes next: the second text
 * part when `result.md` was refused.
 */
export function deliveryItems(
  row: Pick<DeliveryRow, 'body' | 'reshapes' | 'documents'>,
  maxLength: number,
): DeliveryItem[] {
  const parts = layoutParts(row.body, maxLength, row.reshapes);
  const documents = row.documents ?? [];
  const longBody = documents.findIndex((d) => d.use === 'long_body' && !d.refused);
  const items: DeliveryItem[] =
    longBody >= 0 && splitMessage(row.body, maxLength).length > LONG_BODY_PARTS
      ? [
          { kind: 'text', text: parts[0]! },
          { kind: 'document', document: documents[longBody]!, documentIndex: longBody },
        ]
      : parts.map((text) => ({ kind: 'text', text }));
  documents.forEach((document, documentIndex) => {
    if (document.use === 'always' && !document.refused) items.push({ kind: 'document', document, documentIndex });
  });
  return items;
}
