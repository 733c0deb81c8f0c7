/**
 * The catalog page: its shape, and the protocol's guarantees within it (one commit per timestamp,
 * nothing newer than the page, no duplicates), plus the bounds past which no store can hold an item.
 *
 * Hot path: the cross-item checks are plain loops over maps, so a hostile page with a million items
 * is still parsed in linear time.
 */
import * as z from 'zod';
import { DocumentKind, InvalidDocumentError } from './errors.js';
import type { CatalogPage, DocumentBody, PageItem } from './documents.js';
import { httpUrl, leafTypeField, nonEmptyString, nonNegativeInteger, timestamp } from './field-schemas.js';
import { fastPageFields, type PageFields } from './fast-path.js';
import { Problems, check, clip, parseJson, quote, requireObject } from './json.js';
import { comparableVersion, identityKeyProblem } from '../contract/identity.js';
import type { Ticks } from '../contract/time.js';

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

/** `package "id" "version" (leaf "url")`, each clipped: how an item is named in a per-item error. */
export function describeItem(item: Pick<PageItem, 'id' | 'version' | 'url'>): string {
  return `package ${quote(item.id)} ${quote(item.version)} (leaf ${quote(item.url)})`;
}

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
  const problems = new Problems();
  // The common case, a valid page, skips zod; anything the fast path is not sure of goes through zod, which
  // decides and words the problems.
  const page = fastPageFields(document) ?? zodPageFields(document, url);

  const items: PageItem[] = new Array(page.items.length);
  const byUrl = new Map<string, number>();
  const commitAt = new Map<Ticks, number>();
  const timeOf = new Map<string, number>();
  const identities = new Map<string, number>();
  for (let i = 0; i < page.items.length; i++) {
    const item: PageItem = page.items[i]!;
    const unstorable = identityKeyProblem(item.id, item.version);
    items[i] =
      unstorable === undefined
        ? item
        : { ...item, problem: new InvalidDocumentError(url, `items[${i}]: ${describeItem(item)} cannot be stored: ${unstorable}`) };

    const sameUrl = byUrl.get(item.url);
    if (sameUrl !== undefined) problems.add(['items', i, '@id'], `duplicate of items[${sameUrl}]: ${quote(item.url)}`);
    else byUrl.set(item.url, i);

    if (item.commitTicks > page.commitTicks) {
      problems.add(
        ['items', i, 'commitTimeStamp'],
        `${quote(item.commitTimeStamp)} is after the page's commitTimeStamp ${quote(page.commitTimeStamp)}`,
      );
    }

    const atSameTime = commitAt.get(item.commitTicks);
    if (atSameTime === undefined) commitAt.set(item.commitTicks, i);
    else if (items[atSameTime]!.commitId !== item.commitId) {
      problems.add(
        ['items', i, 'commitId'],
        `${quote(item.commitId)} differs from items[${atSameTime}].commitId ${quote(items[atSameTime]!.commitId)} ` +
          `at the same commitTimeStamp ${quote(item.commitTimeStamp)} (one commit per timestamp)`,
      );
    }

    const sameCommit = timeOf.get(item.commitId);
    if (sameCommit === undefined) timeOf.set(item.commitId, i);
    else if (items[sameCommit]!.commitTicks !== item.commitTicks) {
      problems.add(
        ['items', i, 'commitTimeStamp'],
        `${quote(item.commitTimeStamp)} differs from items[${sameCommit}].commitTimeStamp ` +
          `${quote(items[sameCommit]!.commitTimeStamp)} in the same commit ${quote(item.commitId)}`,
      );
    }

    const identity = `${item.commitId}\n${item.id.toLowerCase()}\n${comparableVersion(item.version)}`;
    const twin = identities.get(identity);
    if (twin === undefined) identities.set(identity, i);
    else {
      problems.add(
        ['items', i],
        `${clip(item.id)} ${clip(item.version)} appears twice in commit ${quote(item.commitId)}: ` +
          `${quote(items[twin]!.url)} (items[${twin}]) and ${quote(item.url)}`,
      );
    }
  }
  problems.throwIfAny(url);
  return {
    commitId: page.commitId,
    commitTimeStamp: page.commitTimeStamp,
    commitTicks: page.commitTicks,
    ...(page.count === undefined ? {} : { count: page.count }),
    ...(page.parent === undefined ? {} : { parent: page.parent }),
    items,
  };
}

/**
 * The zod path: every problem of the page's shape in one message (thrown), or its fields. Exported for the test
 * that holds the fast path to it (test/unit/fast-path.test.ts); {@link parseCatalogPage} is the way in.
 *
 * @throws {@link InvalidDocumentError} when the schema rejects the document.
 */
export function zodPageFields(document: Record<string, unknown>, url: string): PageFields {
  const problems = new Problems();
  const data = check(catalogPageSchema, document, problems);
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
