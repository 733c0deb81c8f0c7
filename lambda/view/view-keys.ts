import { idSegment } from '../contract/identity.js';

/** `{prefix}packages/{id}/index.json`: `{id}` is the leaf keys' segment (lowercased, percent-encoded). */
export function packageIndexKey(prefix: string, id: string): string {
  return `${prefix}packages/${idSegment(id)}/index.json`;
}

/** The view consumer's cursor name by default. */
export const VIEW_CONSUMER = 'view-latest';
