/**
 * The catalog page: its shape, and the protocol's guarantees within it (one commit per timestamp,
 * nothing newer than the page, no duplicates), plus the bounds past which no store can hold an item.
 *
 * The cross-item checks are in page-check.ts (no zod); this file's schema is built on first use.
 */
import * as z from 'zod';
import { DocumentKind } from './errors.js';
import type { CatalogPage, DocumentBody } from './documents.js';
import { fieldSchemas } from './field-schemas.js';
import { fastPageFields, type PageFields } from './fast-path.js';
import { Problems, check, parseJson, requireObject } from './json.js';
import { pageFrom } from './page-check.js';

/** The page's schema, built on first use (see field-schemas.ts). */
function build() {
  const { httpUrl, leafTypeField, nonEmptyString, nonNegativeInteger, timestamp } = fieldSchemas();
  const pageItemSchema = z.object({
    '@id': httpUrl,
    '@type': leafTypeField,
    commitId: nonEmptyString,
    commitTimeStamp: timestamp,
    'nuget:id': nonEmptyString,
    'nuget:version': nonEmptyString,
  });

  const catalogPageSchema = z.object({
    commitId: nonEmptyString,
    commitTimeStamp: timestamp,
    count: nonNegativeInteger.optional(),
    parent: httpUrl.optional(),
    items: z.array(pageItemSchema),
  });
  return catalogPageSchema;
}

let built: ReturnType<typeof build> | undefined;

/**
 * Parses and validates a catalog page: its shape, and the protocol's guarantees within it: no item
 * newer than the page, one commit id per timestamp and one timestamp per commit id, at most one
 * leaf per package id + version in a commit, and no leaf URL twice. An item whose id or version no
 * store can hold does not fail the page: it gets a {@link PageItem.problem}.
 *
 * @param body - the response body; one leading UTF-8 BOM is ignored.
 * @param url - where the body came from, for error messages.
 * @throws {@link InvalidDocumentError} when the body is not a valid catalog page.
 */
export function parseCatalogPage(body: DocumentBody, url: string): CatalogPage {
  const document = requireObject(parseJson(body, url), url, DocumentKind.page);
  // The common case, a valid page, skips zod; anything the fast path is not sure of goes through zod, which
  // decides and words the problems.
  const page = fastPageFields(document) ?? zodPageFields(document, url);
  return pageFrom(page, url);
}

/**
 * The zod path: every problem of the page's shape in one message (thrown), or its fields. Exported for the test
 * that holds the fast path to it (test/unit/fast-path.test.ts); {@link parseCatalogPage} is the way in.
 *
 * @throws {@link InvalidDocumentError} when the schema rejects the document.
 */
export function zodPageFields(document: Record<string, unknown>, url: string): PageFields {
  const problems = new Problems();
  const data = check((built ??= build()), document, problems);
  problems.throwIfAny(url);
  const page = data!;
  return {
    commitId: page.commitId,
    commitTimeStamp: page.commitTimeStamp.text,
    commitTicks: page.commitTimeStamp.ticks,
    ...(page.count === undefined ? {} : { count: page.count }),
    ...(page.parent === undefined ? {} : { parent: page.parent }),
    items: page.items.map((raw) => ({
      url: raw['@id'],
      type: raw['@type'].type,
      commitId: raw.commitId,
      commitTimeStamp: raw.commitTimeStamp.text,
      commitTicks: raw.commitTimeStamp.ticks,
      id: raw['nuget:id'],
      version: raw['nuget:version'],
    })),
  };
}
