import { idSegment } from '../contract/identity.js';

export { VIEW_CONSUMER } from '../contract/view.js';

/** `{prefix}packages/{id}/index.json`: `{id}` is the leaf keys' segment (lowercased, percent-encoded). */
export function packageIndexKey(prefix: string, id: string): string {
  return `${prefix}packages/${idSegment(id)}/index.json`;
}
