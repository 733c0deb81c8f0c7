/**
 * The catalog index's guarantees, with no zod: no page listed twice, none newer than the index itself. The second
 * half of `parseCatalogIndex`, shared by the synchronous parser (index-schema.ts) and the client's reader
 * (read-documents.ts), which loads zod only for an index the fast path is not sure of.
 */
import type { CatalogIndex } from './documents.js';
import { Problems, quote } from './json.js';

/**
 * The index, once no page is listed twice or is newer than the index.
 *
 * @throws {@link InvalidDocumentError} naming each duplicate and each page newer than the index.
 */
export function indexFrom(index: CatalogIndex, url: string): CatalogIndex {
  const problems = new Problems();
  const seen = new Map<string, number>();
  for (let i = 0; i < index.items.length; i++) {
    const entry = index.items[i]!;
    const first = seen.get(entry.url);
    if (first !== undefined) problems.add(['items', i, '@id'], `duplicate of items[${first}]: ${quote(entry.url)}`);
    else seen.set(entry.url, i);
    if (entry.commitTicks > index.commitTicks) {
      problems.add(
        ['items', i, 'commitTimeStamp'],
        `${quote(entry.commitTimeStamp)} is after the index's commitTimeStamp ` +
          `${quote(index.commitTimeStamp)}: the index is inconsistent`,
      );
    }
  }
  problems.throwIfAny(url);
  return index;
}
