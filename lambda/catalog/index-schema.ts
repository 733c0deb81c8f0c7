/**
 * The catalog index: its shape, and that no page is listed twice or is newer than the index itself.
 */
import * as z from 'zod';
import { DocumentKind } from './errors.js';
import type { CatalogIndex, CatalogIndexEntry, DocumentBody } from './documents.js';
import { httpUrl, nonEmptyString, nonNegativeInteger, timestamp } from './field-schemas.js';
import { Problems, check, parseJson, quote, requireObject } from './json.js';

const indexEntrySchema = z.object({
  '@id': httpUrl,
  commitId: nonEmptyString,
  commitTimeStamp: timestamp,
  count: nonNegativeInteger,
  items: z
    .undefined({ error: 'a page entry in the catalog index must not embed items (pages never embed leaves)' })
    .optional(),
});

const catalogIndexSchema = z.object({
  commitId: nonEmptyString,
  commitTimeStamp: timestamp,
  count: nonNegativeInteger.optional(),
  items: z.array(indexEntrySchema),
});

export function validateCatalogIndex(json: unknown, url: string): CatalogIndex {
  const document = requireObject(json, url, DocumentKind.catalogIndex);
  const problems = new Problems();
  const data = check(catalogIndexSchema, document, problems);
  problems.throwIfAny(url);
  const index = data!;

  const items: CatalogIndexEntry[] = new Array(index.items.length);
  const seen = new Map<string, number>();
  for (let i = 0; i < index.items.length; i++) {
    const entry = index.items[i]!;
    const pageUrl = entry['@id'];
    const first = seen.get(pageUrl);
    if (first !== undefined) problems.add(['items', i, '@id'], `duplicate of items[${first}]: ${quote(pageUrl)}`);
    else seen.set(pageUrl, i);
    if (entry.commitTimeStamp.ticks > index.commitTimeStamp.ticks) {
      problems.add(
        ['items', i, 'commitTimeStamp'],
        `${quote(entry.commitTimeStamp.text)} is after the index's commitTimeStamp ` +
          `${quote(index.commitTimeStamp.text)}: the index is inconsistent`,
      );
    }
    items[i] = {
      url: pageUrl,
      commitId: entry.commitId,
      commitTimeStamp: entry.commitTimeStamp.text,
      commitTicks: entry.commitTimeStamp.ticks,
      count: entry.count,
    };
  }
  problems.throwIfAny(url);
  return {
    commitId: index.commitId,
    commitTimeStamp: index.commitTimeStamp.text,
    commitTicks: index.commitTimeStamp.ticks,
    ...(index.count === undefined ? {} : { count: index.count }),
    items,
  };
}

/**
 * Parses and validates a catalog index: its shape, and that no page is listed twice or is newer
 * than the index itself.
 *
 * @param body - the response body; one leading UTF-8 BOM is ignored.
 * @param url - where the body came from, for error messages.
 * @throws {@link InvalidDocumentError} when the body is not a valid catalog index.
 */
export function parseCatalogIndex(body: DocumentBody, url: string): CatalogIndex {
  return validateCatalogIndex(parseJson(body, url), url);
}
