/**
 * `{prefix}view.json`, what the latest view knows of its own completeness (contract/view.ts holds its shape):
 * read and written through the view's documents, so each write is a compare-and-swap like an index's (S3:
 * `If-Match` / `If-None-Match: *`; a folder: the view lock), and two writers never lose each other's changes.
 */
import { parseViewState, viewStateKeyOf, type ViewState } from '../contract/view.js';
import type { ViewDocuments } from './view-documents.js';

/** Rounds of read, change, conditional write before a change is left to the next run (others keep writing). */
const MAX_STATE_ROUNDS = 5;

/** The view's state as stored, or undefined when there is none yet. */
export async function readViewState(documents: ViewDocuments, prefix: string): Promise<ViewState | undefined> {
  const stored = await documents.read(viewStateKeyOf(prefix));
  return stored === undefined ? undefined : parseViewState(parsedOrUndefined(stored.bytes));
}

/**
 * Changes the stored state with `change` (given the stored one, or undefined): written when it differs (and, with
 * none stored, when it records anything), conditional
 * on what was read, again from a fresh read when another writer got there first. Resolves to the state it wrote or
 * found current; after {@link MAX_STATE_ROUNDS} lost rounds, to the last one it computed (the next run tries again).
 */
export async function updateViewState(
  documents: ViewDocuments,
  prefix: string,
  change: (stored: ViewState | undefined) => ViewState,
): Promise<ViewState> {
  const key = viewStateKeyOf(prefix);
  let next: ViewState | undefined;
  for (let round = 0; round < MAX_STATE_ROUNDS; round++) {
    const stored = await documents.read(key);
    const current = stored === undefined ? undefined : parseViewState(parsedOrUndefined(stored.bytes));
    next = change(current);
    // A view with nothing to record writes no view.json: most mirrors never change their filter.
    if (stored === undefined && next.historySeen === 0 && next.stale.length === 0 && next.rebuilt === undefined)
      return next;
    const bytes = Buffer.from(JSON.stringify(next));
    if (stored?.bytes.equals(bytes)) return next;
    if (await documents.writeIf(key, bytes, stored?.tag)) return next;
  }
  return next!;
}

function parsedOrUndefined(bytes: Buffer): unknown {
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch {
    return undefined;
  }
}
