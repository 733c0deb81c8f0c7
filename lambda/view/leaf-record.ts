/**
 * One leaf as its commit's manifest lists it, reduced to what the view's fold needs without the body, and its one
 * line format: the same bytes whoever writes them (the rebuild's records on S3 or in a folder, in a Lambda, a worker
 * process or in-process), so that every path folds the same records.
 */
import { decodeCommitKey, leafKey } from '../contract/keys.js';
import { formatTimestamp } from '../contract/time.js';

/** One leaf as a manifest lists it, with its commit: what the fold needs to build an entry without the body. */
export interface LeafRecord {
  readonly commitKey: string;
  readonly commitTimeStamp: string;
  /** The id as the leaf spells it. */
  readonly id: string;
  /** The identity form of the version (`comparableVersion`). */
  readonly version: string;
  readonly type: 'PackageDetails' | 'PackageDelete';
  readonly quarantined: boolean;
  /** The leaf's key, as its manifest names it. */
  readonly key: string;
}

/**
 * 32-bit FNV-1a of `text`'s UTF-16 code units, as an unsigned integer: for the ASCII of package ids, the FNV-1a of
 * their bytes (test/unit/latest-leaf-spill.test.ts holds it to the published test vectors). A hash to spread
 * packages over shards, not a checksum.
 */
export function fnv1a32(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return hash >>> 0;
}

/** The shard of a package among `shards`: FNV-1a of its lowercased id. */
export function shardOf(lowerId: string, shards: number): number {
  return fnv1a32(lowerId) % shards;
}

/** The identity of a record: `{lowercased id}\n{version}` (the version is already its identity form). */
export function identityOf(record: Pick<LeafRecord, 'id' | 'version'>): string {
  return `${record.id.toLowerCase()}\n${record.version}`;
}

/**
 * A record as one JSON line (without the newline): `[commitKey, timeStamp, id, version, kind, key]`, kind 0 for a
 * delete, 1 for details, 2 for a quarantined details leaf. What follows from the rest is written as "" (half a
 * line): the timestamp the commit key encodes, and the key the follower gives the leaf under `keyPrefix`.
 */
export function encodeLeafRecord(record: LeafRecord, keyPrefix: string): string {
  const timeStamp = record.commitTimeStamp === timeStampOf(record.commitKey) ? '' : record.commitTimeStamp;
  const key = record.key === keyOf(keyPrefix, record.commitKey, record.id, record.version) ? '' : record.key;
  return JSON.stringify([
    record.commitKey,
    timeStamp,
    record.id,
    record.version,
    record.type === 'PackageDelete' ? 0 : record.quarantined ? 2 : 1,
    key,
  ]);
}

/** The record of a line {@link encodeLeafRecord} wrote with the same `keyPrefix`. */
export function decodeLeafRecord(line: string, keyPrefix: string): LeafRecord {
  const [commitKey, timeStamp, id, version, kind, key] = JSON.parse(line) as [
    string,
    string,
    string,
    string,
    number,
    string,
  ];
  return {
    commitKey,
    commitTimeStamp: timeStamp === '' ? timeStampOf(commitKey)! : timeStamp,
    id,
    version,
    type: kind === 0 ? 'PackageDelete' : 'PackageDetails',
    quarantined: kind === 2,
    key: key === '' ? keyOf(keyPrefix, commitKey, id, version)! : key,
  };
}

/** The timestamp a commit key encodes (7 digits), or undefined for a key that does not decode. */
function timeStampOf(commitKey: string): string | undefined {
  try {
    return formatTimestamp(decodeCommitKey(commitKey));
  } catch {
    return undefined;
  }
}

/** The key the follower gives a leaf, or undefined when it cannot make one (an id no store can hold). */
function keyOf(prefix: string, commitKey: string, id: string, version: string): string | undefined {
  try {
    return leafKey(prefix, commitKey, id, version);
  } catch {
    return undefined;
  }
}
