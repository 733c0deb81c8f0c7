import { CatalogSyncError, ErrorCode } from '../contract/errors.js';
import { parseTimestamp } from '../contract/time.js';
import type { CursorState } from './types.js';

/** Sort key of a cursor item. */
export const CURSOR_SK = 'cursor';

/** A cursor item that cannot be read back as a cursor. */
export class CursorItemError extends CatalogSyncError {
  override readonly name = 'CursorItemError';
  override get code(): ErrorCode {
    return ErrorCode.cursorItem;
  }
  constructor(table: string, name: string, reason: string, options?: { cause?: unknown }) {
    super(`DynamoDB table ${table}, cursor ${JSON.stringify(name)}: ${reason}`, options);
  }
}

/** A cursor item of `table` (its `pk` is `name`) as a {@link CursorState}; throws {@link CursorItemError} when it is not one. */
export function cursorStateOf(table: string, name: string, item: Record<string, unknown>): CursorState {
  const stored = item.cursor;
  if (typeof stored !== 'string')
    throw new CursorItemError(table, name, 'attribute "cursor" is missing or not a string');
  try {
    return {
      value: parseTimestamp(stored),
      stored,
      ...(typeof item.commitId === 'string' ? { commitId: item.commitId } : {}),
      ...(typeof item.runId === 'string' ? { runId: item.runId } : {}),
      ...(typeof item.updatedAt === 'string' ? { updatedAt: item.updatedAt } : {}),
    };
  } catch (cause) {
    throw new CursorItemError(table, name, `attribute "cursor" is not a timestamp: ${(cause as Error).message}`, {
      cause,
    });
  }
}
