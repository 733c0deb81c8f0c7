/**
 * A catalog page's guarantees within it, with no zod: no item newer than the page, one commit id per timestamp and
 * one timestamp per commit id, at most one leaf per package id + version in a commit, no leaf URL twice, and the
 * bounds past which no store can hold an item. The second half of `parseCatalogPage`, shared by the synchronous
 * parser (page-schema.ts) and the client's reader (read-documents.ts), which loads zod only for a page the fast path
 * is not sure of.
 *
 * Hot path: plain loops over maps, so a hostile page with a million items is still checked in linear time.
 */
import { InvalidDocumentError } from './errors.js';
import type { CatalogPage, PageItem } from './documents.js';
import type { PageFields } from './fast-path.js';
import { Problems, clip, quote } from './json.js';
import { comparableVersion, identityKeyProblem } from '../contract/identity.js';
import type { Ticks } from '../contract/time.js';

/** `package "id" "version" (leaf "url")`, each clipped: how an item is named in a per-item error. */
export function describeItem(item: Pick<PageItem, 'id' | 'version' | 'url'>): string {
  return `package ${quote(item.id)} ${quote(item.version)} (leaf ${quote(item.url)})`;
}

/**
 * The page, once its items keep the protocol's guarantees. An item whose id or version no store can hold does not
 * fail the page: it gets a {@link PageItem.problem}.
 *
 * @throws {@link InvalidDocumentError} naming each broken guarantee.
 */
export function pageFrom(page: PageFields, url: string): CatalogPage {
  const problems = new Problems();
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
        : {
            ...item,
            problem: new InvalidDocumentError(
              url,
              `items[${i}]: ${describeItem(item)} cannot be stored: ${unstorable}`,
            ),
          };

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
