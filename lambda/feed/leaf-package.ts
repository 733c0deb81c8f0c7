/** What the feed reads in a details leaf: the package's digest, and the leaf as a registration's `catalogEntry`. */
import { parseStoredLeaf } from '../consumer/stored-leaf.js';
import type { SnapshotReader } from '../stores/types.js';
import type { VersionEntry } from '../view/package-index.js';
import { FeedError, type PackageDigest } from './errors.js';

/** A details leaf as stored in the mirror, decoded once. */
export interface LeafPackage {
  readonly body: Record<string, unknown>;
  /** The leaf's `packageHash` and `packageSize`, or why the package cannot be checked against them. */
  readonly digest: PackageDigest | { readonly problem: string };
}

/**
 * Reads the leaf a view entry names, with the consumer's one decoding (a byte-order mark dropped, strict UTF-8).
 *
 * @throws {@link FeedError} when the mirror has no bytes at the key (the view names a leaf the mirror lacks);
 *   `StoredLeafError` for bytes the follower would not have stored.
 */
export async function readLeafPackage(
  store: SnapshotReader,
  where: string,
  entry: Pick<VersionEntry, 'leaf' | 'commitKey'>,
): Promise<LeafPackage> {
  const bytes = await store.getBytes(entry.leaf);
  if (bytes === undefined)
    throw new FeedError(`${where} ${entry.leaf}: the latest view names this leaf, but the mirror has no bytes there`);
  const body = parseStoredLeaf(bytes, { where, key: entry.leaf, commitKey: entry.commitKey });
  return { body, digest: digestOf(body) };
}

/** The leaf's digest: `packageHash` (SHA512, base64) and `packageSize` (bytes), or what is missing. */
export function digestOf(body: Record<string, unknown>): PackageDigest | { readonly problem: string } {
  const hash = body['packageHash'];
  const size = body['packageSize'];
  const algorithm = body['packageHashAlgorithm'];
  if (algorithm !== undefined && (typeof algorithm !== 'string' || algorithm.toUpperCase() !== 'SHA512'))
    return { problem: `the leaf's packageHashAlgorithm is ${JSON.stringify(algorithm)}, not SHA512` };
  if (typeof hash !== 'string' || !/^[A-Za-z0-9+/]{86}==$/.test(hash))
    return { problem: 'the leaf has no packageHash (SHA-512, base64) to check the package against' };
  if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 0)
    return { problem: 'the leaf has no packageSize to check the package against' };
  return { hash, size };
}

/** The leaf as a registration's `catalogEntry`: without `@context` and `packageEntries`, `listed` written out. */
export function catalogEntryOf(
  body: Record<string, unknown>,
  listed: boolean,
  packageContent: string,
): Record<string, unknown> {
  const { '@context': _context, packageEntries: _entries, ...entry } = body;
  return { ...entry, listed, packageContent };
}
