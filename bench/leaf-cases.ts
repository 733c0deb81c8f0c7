/**
 * Every leaf of a generated catalog as the engine meets it: the body as served, its URL and the page item that
 * pointed at it. Shared by the leaf-validation row (validation.ts) and the leaf-path micro-benchmark (leaf-path.ts).
 */
import type { PageItem } from '../lambda/catalog/index.js';
import { parseTimestamp } from '../lambda/contract/index.js';
import { renderLeafBody, type GeneratedCatalog } from '../testkit/index.js';

/** One leaf to validate. */
export interface LeafCase {
  readonly body: Buffer;
  readonly url: string;
  readonly item: PageItem;
}

/** The leaves of `catalog`, served from `origin`, in commit order. */
export function leafCases(catalog: GeneratedCatalog, origin: string): LeafCase[] {
  const cases: LeafCase[] = [];
  for (const commit of catalog.commits) {
    for (const leaf of commit.leaves) {
      const url = origin + leaf.path;
      const item: PageItem = {
        url,
        type: leaf.type,
        commitId: commit.commitId,
        commitTimeStamp: commit.timestamp,
        commitTicks: parseTimestamp(commit.timestamp),
        id: leaf.id,
        version: leaf.version,
      };
      cases.push({ body: Buffer.from(renderLeafBody(commit, leaf, origin)), url, item });
    }
  }
  return cases;
}
