/**
 * Package ids of a chosen length in a generated catalog: nuget.org holds ids of up to 128 characters (NuGet's
 * client allows 100), and a store holds what its keys can: a test gives leaves such ids before the replica
 * serves the catalog, and checks what is stored with the usual verifiers.
 */
import type { GeneratedCatalog, GeneratedLeaf } from './catalog-generator.js';

/** An id of exactly `length` characters, shaped like a real one: `Very.Long.Company.Product.` and a filler, unique by `serial`. */
export function longId(length: number, serial: number): string {
  const head = `Very.Long.Company.Product${serial}.`;
  if (length <= head.length) throw new Error(`an id of ${length} characters is not long`);
  const filler = 'Extensions.DependencyInjection.Abstractions.';
  return `${(head + filler.repeat(Math.ceil(length / filler.length))).slice(0, length - 1)}X`;
}

/**
 * Renames the first leaf of commit `commitIndex` to an id of each length, one commit after another, and returns
 * the leaves (page item and body both carry the new id; the leaf's URL keeps its old path).
 */
export function giveLongIds(
  catalog: GeneratedCatalog,
  lengths: readonly number[],
  commitIndex: number,
): GeneratedLeaf[] {
  return lengths.map((length, i) => {
    const leaf = catalog.commits[commitIndex + i]!.leaves[0]!;
    leaf.id = longId(length, commitIndex + i);
    return leaf;
  });
}
