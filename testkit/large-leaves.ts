/**
 * Large leaves, as nuget.org serves for packages of thousands of files: the leaf's own document with a long
 * `packageEntries` array (one entry a file, as NuGetGallery writes them), grown to a given size. For the tests and
 * the benchmark of memory bounded by bytes (issue 30): a commit of many such leaves.
 */
import type { GeneratedCatalog, GeneratedCommit } from './catalog-generator.js';
import type { CatalogReplica } from './catalog-replica.js';
import { renderLeafBody } from './leaf-body.js';

/** The origin large bodies name in their `@id`s (the pipeline checks a leaf's fields, not its `@id`). */
const BODY_ORIGIN = 'https://api.nuget.org';

/** One `packageEntries` item, pretty-printed as the leaf around it. */
function entry(n: number): string {
  const name = `Contoso.Library.Part${n}.dll`;
  return `    {
      "@id": "${BODY_ORIGIN}/packages/contoso.library/lib/net8.0/${name}",
      "@type": "PackageEntry",
      "compressedLength": ${10_000 + (n % 9_973)},
      "fullName": "lib/net8.0/${name}",
      "length": ${30_000 + (n % 30_011)},
      "name": "${name}"
    }`;
}

/** The `packageEntries` text of at least `bytes`, made once per size: the grown leaves of a test share it. */
const entriesOfSize = new Map<number, string>();
function entriesOf(bytes: number): string {
  let text = entriesOfSize.get(bytes);
  if (text === undefined) {
    const parts: string[] = [];
    for (let n = 0, size = 0; size < bytes; n++) {
      const each = entry(n);
      parts.push(each);
      size += each.length + 2;
    }
    text = parts.join(',\n');
    entriesOfSize.clear();
    entriesOfSize.set(bytes, text);
  }
  return text;
}

/**
 * The three parts of `body` (a leaf document, pretty-printed) grown to at least `bytes` with a `packageEntries`
 * array: its head, the entries (the same text for every leaf grown to that size: a server may send it from one
 * buffer) and its tail.
 */
export function grownLeafParts(body: string, bytes: number): { head: string; entries: string; tail: string } {
  const end = body.lastIndexOf('}');
  return {
    head: `${body.slice(0, end).trimEnd()},\n  "packageEntries": [\n`,
    entries: entriesOf(Math.max(0, bytes - end)),
    tail: '\n  ]\n}',
  };
}

/** `body` (a leaf document, pretty-printed) with a `packageEntries` array that makes it at least `bytes` long. */
export function growLeafBody(body: string, bytes: number): string {
  const { head, entries, tail } = grownLeafParts(body, bytes);
  return head + entries + tail;
}

/**
 * Makes every PackageDetails leaf of `commit` at least `bytes` long (served byte for byte: `leaf.body`). Returns
 * how many leaves it grew.
 */
export function growCommitLeaves(commit: GeneratedCommit, bytes: number): number {
  let grown = 0;
  for (const leaf of commit.leaves) {
    if (leaf.type !== 'PackageDetails') continue;
    leaf.body = growLeafBody(renderLeafBody(commit, leaf, BODY_ORIGIN), bytes);
    grown++;
  }
  return grown;
}

/** {@link growCommitLeaves} for the commit at `index` of `catalog`. */
export function growLeavesOf(catalog: GeneratedCatalog, index: number, bytes: number): number {
  const commit = catalog.commits[index];
  if (commit === undefined) throw new Error(`the catalog has no commit ${index}`);
  return growCommitLeaves(commit, bytes);
}

/**
 * Has `replica` serve each grown leaf of `commit` uncompressed (`Content-Encoding: identity`, as a server that does
 * not compress JSON): no brotli of megabytes in the test's own process, and the client holds the declared length.
 */
export function serveUncompressed(replica: CatalogReplica, commit: GeneratedCommit): void {
  for (const leaf of commit.leaves) {
    if (leaf.body !== undefined)
      replica.overrideBody(leaf.path, leaf.body, { headers: { 'Content-Encoding': 'identity' } });
  }
}
