/**
 * The catalog index: its shape (zod, built on first use, for what the fast path is not sure of), then that no page
 * is listed twice or is newer than the index itself (index-check.ts).
 */
import * as z from 'zod';
import { DocumentKind } from './errors.js';
import type { CatalogIndex, CatalogIndexEntry, DocumentBody } from './documents.js';
import { fastIndexFields } from './fast-path.js';
import { fieldSchemas } from './field-schemas.js';
import { indexFrom } from './index-check.js';
import { Problems, check, parseJson, requireObject } from './json.js';

/** The index's schema, built on first use (see field-schemas.ts). */
function build() {
  const { httpUrl, nonEmptyString, nonNegativeInteger, timestamp } = fieldSchemas();
  const indexEntrySchema = z.object({
    '@id': httpUrl,
    commitId: nonEmptyString,
    commitTimeStamp: timestamp,
    count: nonNegativeInteger,
    items: z
      .undefined({ error: 'a page entry in the catalog index must not embed items (pages never embed leaves)' })
      .optional(),
  });

  return z.object({
    commitId: nonEmptyString,
    commitTimeStamp: timestamp,
    count: nonNegativeInteger.optional(),
    items: z.array(indexEntrySchema),
  });
}

let built: ReturnType<typeof build> | undefined;

/**
 * The zod path: every problem of the index's shape in one message (thrown), or its fields (the checks across entries
 * come after). Exported for the test that holds the fast path to it (test/unit/fast-path.test.ts) and for the
 * client's reader (read-documents.ts); {@link parseCatalogIndex} is the way in.
 *
 * @throws {@link InvalidDocumentError} when the schema rejects the document.
 */
export function zodIndexFields(document: Record<string, unknown>, url: string): CatalogIndex {
  const problems = new Problems();
  const data = check((built ??= build()), document, problems);
  problems.throwIfAny(url);
  const index = data!;
  const items: CatalogIndexEntry[] = index.items.map((entry) => ({
    url: entry['@id'],
    commitId: entry.commitId,
    commitTimeStamp: entry.commitTimeStamp.text,
    commitTicks: entry.commitTimeStamp.ticks,
    count: entry.count,
  }));
  return {
    commitId: index.commitId,
    commitTimeStamp: index.commitTimeStamp.text,
    commitTicks: index.commitTimeStamp.ticks,
    ...(index.count === undefined ? {} : { count: index.count }),
    items,
  };
}

export function validateCatalogIndex(json: unknown, url: string): CatalogIndex {
  const document = requireObject(json, url, DocumentKind.catalogIndex);
  // The common case, a valid index, skips zod; anything the fast path is not sure of goes through zod, which decides
  // and words the problems.
  return indexFrom(fastIndexFields(document) ?? zodIndexFields(document, url), url);
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
