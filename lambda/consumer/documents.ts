/**
 * The two documents a consumer reads, checked against the contract: `watermark.json` (the bound) and
 * `commits/{commitKey}.json` (a commit's manifest). A document that does not match stops the reader with a
 * {@link MirrorDocumentError} naming its key: a consumer never guesses past a broken mirror.
 */
import { commitKeyOf, decodeCommitKey } from '../contract/keys.js';
import { parseTimestamp, type Ticks } from '../contract/time.js';
import { MirrorDocumentError } from './errors.js';

/** `{prefix}watermark.json`: everything at or before `cursor` is stored, manifests included. */
export interface Watermark {
  /** The commit timestamp, 7 fractional digits. */
  readonly cursor: string;
  readonly commitId: string | null;
  /** The 12-character key of `cursor`: list `commits/` up to `commits/{commitKey}.json` and nothing is missing. */
  readonly commitKey: string;
  readonly updatedAt: string;
}

/** One leaf of a commit manifest, as stored. */
export interface ManifestLeaf {
  /** The leaf's object key: `{prefix}leaves/{commitKey}/{id}/{version}.json`. */
  readonly key: string;
  /** The package id as the catalog's page item gives it. */
  readonly id: string;
  /** The version as the catalog's page item gives it. */
  readonly version: string;
  readonly type: 'PackageDetails' | 'PackageDelete';
  /** Set aside by quarantine: the leaf's body is not stored (its record is under `quarantine/`). */
  readonly quarantined?: true;
}

/** A commit manifest with the key it was read at. */
export interface Manifest {
  readonly commitKey: string;
  readonly commitId: string;
  readonly commitTimeStamp: string;
  /**
   * On a mirror with an id filter: how many of the commit's page items the filter left out (their leaves are not
   * stored: filtered, not missing). Absent on an unfiltered mirror.
   */
  readonly filtered?: number;
  readonly leaves: readonly ManifestLeaf[];
}

const LEAF_TYPES = new Set(['PackageDetails', 'PackageDelete']);

/** The watermark document, checked; `where` names it in errors. */
export function parseWatermark(bytes: Buffer, where: string): Watermark & { readonly ticks: Ticks } {
  const value = parseJson(bytes, where);
  const { cursor, commitId, commitKey, updatedAt } = value;
  if (typeof cursor !== 'string') throw new MirrorDocumentError(where, '"cursor" is missing or not a string');
  let ticks: Ticks;
  try {
    ticks = parseTimestamp(cursor);
  } catch (cause) {
    throw new MirrorDocumentError(where, `"cursor" ${JSON.stringify(cursor)} is not a timestamp`, { cause });
  }
  if (typeof commitKey !== 'string') throw new MirrorDocumentError(where, '"commitKey" is missing or not a string');
  const expected = keyOfTimestamp(cursor, where);
  if (commitKey !== expected)
    throw new MirrorDocumentError(
      where,
      `"commitKey" ${JSON.stringify(commitKey)} is not the key of "cursor" ${cursor} (${expected})`,
    );
  if (commitId !== null && commitId !== undefined && typeof commitId !== 'string')
    throw new MirrorDocumentError(where, '"commitId" is not a string');
  return {
    cursor,
    commitId: (commitId as string | undefined) ?? null,
    commitKey,
    updatedAt: typeof updatedAt === 'string' ? updatedAt : '',
    ticks,
  };
}

/** A manifest read at `commits/{commitKey}.json`, checked: its timestamp must be that key's. */
export function parseManifest(bytes: Buffer, commitKey: string, where: string): Manifest {
  const value = parseJson(bytes, where);
  const { commitId, commitTimeStamp, filtered, leaves } = value;
  if (typeof commitId !== 'string') throw new MirrorDocumentError(where, '"commitId" is missing or not a string');
  if (typeof commitTimeStamp !== 'string')
    throw new MirrorDocumentError(where, '"commitTimeStamp" is missing or not a string');
  const key = keyOfTimestamp(commitTimeStamp, where);
  if (key !== commitKey)
    throw new MirrorDocumentError(
      where,
      `"commitTimeStamp" ${commitTimeStamp} has the key ${key}, not the manifest's ${commitKey}`,
    );
  if (!Array.isArray(leaves)) throw new MirrorDocumentError(where, '"leaves" is missing or not an array');
  if (filtered !== undefined && !(Number.isSafeInteger(filtered) && (filtered as number) >= 0))
    throw new MirrorDocumentError(where, '"filtered" is not a whole number >= 0');
  return {
    commitKey,
    commitId,
    commitTimeStamp,
    ...(filtered === undefined ? {} : { filtered: filtered as number }),
    leaves: leaves.map((leaf, i) => parseLeaf(leaf, `${where} leaves[${i}]`)),
  };
}

function parseLeaf(value: unknown, where: string): ManifestLeaf {
  if (!isObject(value)) throw new MirrorDocumentError(where, 'not a JSON object');
  const { key, id, version, type, quarantined } = value;
  for (const [name, field] of [
    ['key', key],
    ['id', id],
    ['version', version],
  ] as const) {
    if (typeof field !== 'string' || field === '')
      throw new MirrorDocumentError(where, `"${name}" is missing or not a non-empty string`);
  }
  if (typeof type !== 'string' || !LEAF_TYPES.has(type))
    throw new MirrorDocumentError(where, `"type" ${JSON.stringify(type)} is not PackageDetails or PackageDelete`);
  if (quarantined !== undefined && quarantined !== true)
    throw new MirrorDocumentError(where, '"quarantined" is not true');
  return {
    key: key as string,
    id: id as string,
    version: version as string,
    type: type as ManifestLeaf['type'],
    ...(quarantined === true ? { quarantined: true as const } : {}),
  };
}

function keyOfTimestamp(timestamp: string, where: string): string {
  try {
    return commitKeyOf(timestamp);
  } catch (cause) {
    throw new MirrorDocumentError(where, `${JSON.stringify(timestamp)} is not a commit timestamp with a key`, {
      cause,
    });
  }
}

function parseJson(bytes: Buffer, where: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch (cause) {
    throw new MirrorDocumentError(where, 'not valid JSON', { cause });
  }
  if (!isObject(value)) throw new MirrorDocumentError(where, 'not a JSON object');
  return value;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The commit key of a manifest key `{prefix}commits/{commitKey}.json`, or `undefined` for any other key. */
export function commitKeyOfManifestKey(prefix: string, key: string): string | undefined {
  const start = prefix.length + 'commits/'.length;
  if (key.length !== start + 12 + '.json'.length || !key.endsWith('.json')) return undefined;
  const candidate = key.slice(start, start + 12);
  try {
    decodeCommitKey(candidate);
    return candidate;
  } catch {
    return undefined;
  }
}
