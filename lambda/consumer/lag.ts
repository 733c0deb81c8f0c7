import { TICKS_PER_SECOND, type Ticks } from '../contract/time.js';
import type { CursorStore } from '../stores/types.js';
import { readConsumerCursor } from './consumer-cursors.js';
import { readWatermark, type Mirror } from './mirror.js';

/** How far a named consumer is behind the mirror's watermark. */
export interface ConsumerLag {
  /** The watermark's cursor, or null while the mirror has none. */
  readonly watermark: string | null;
  /** The consumer's stored cursor, or null while it has none. */
  readonly cursor: string | null;
  /**
   * Seconds of commit time between the consumer's cursor and the watermark (0 when caught up); null when either is
   * missing.
   */
  readonly lagSeconds: number | null;
}

/** The watermark minus the consumer's cursor, in seconds of commit time. */
export async function consumerLag(mirror: Mirror, cursors: CursorStore, name: string): Promise<ConsumerLag> {
  const [watermark, cursor] = await Promise.all([readWatermark(mirror), readConsumerCursor(cursors, mirror, name)]);
  const lag = watermark && cursor ? secondsBetween(cursor.value, watermark.ticks) : null;
  return { watermark: watermark?.cursor ?? null, cursor: cursor?.stored ?? null, lagSeconds: lag };
}

/** Seconds of commit time from `from` to `to` (0 when `to` is not later). */
export function secondsBetween(from: Ticks, to: Ticks): number {
  return to <= from ? 0 : Number((to - from) / (TICKS_PER_SECOND / 1000n)) / 1000;
}
