/**
 * The one decoding of a stored leaf, for every reader of the mirror (`MirrorLeaf.json()`, the latest view's upkeep,
 * its rebuild and its quarantine refresh): the follower stores a leaf's bytes exactly as the catalog served them, and
 * some of nuget.org's begin with a UTF-8 byte-order mark. A stored leaf is read exactly as the follower's reader
 * accepted it before storing it (`catalog/json.ts`): one leading BOM dropped, strict UTF-8, JSON, an object. So
 * every leaf the follower stored is readable, and bytes it would have refused are refused here too, by name.
 */
import { InvalidDocumentError } from '../catalog/errors.js';
import { parseJson } from '../catalog/json.js';
import { StoredLeafError } from './errors.js';

/** Where a stored leaf was read: named in errors. */
export interface StoredLeafPlace {
  /** The mirror: its bucket or folder (and prefix). */
  readonly where: string;
  /** The leaf's key. */
  readonly key: string;
  /** The key of the commit the leaf belongs to. */
  readonly commitKey: string;
}

/**
 * A stored leaf's body as JSON, decoded as the follower decoded it when it stored it.
 *
 * @throws {@link StoredLeafError} (`CS_ERR_STORED_LEAF`) naming the mirror, the key and the commit, for bytes the
 * follower would not have stored: invalid UTF-8, not JSON (two byte-order marks included), or not a JSON object.
 */
export function parseStoredLeaf(bytes: Uint8Array, place: StoredLeafPlace): Record<string, unknown> {
  let json: unknown;
  try {
    json = parseJson(bytes, place.key);
  } catch (error) {
    if (!(error instanceof InvalidDocumentError)) throw error;
    throw new StoredLeafError(place.where, place.key, place.commitKey, `the stored leaf is ${error.reason}`, {
      cause: error,
    });
  }
  // As the follower's `requireObject`: a leaf is a JSON object.
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw new StoredLeafError(
      place.where,
      place.key,
      place.commitKey,
      `the stored leaf is not a JSON object (${json === null ? 'null' : Array.isArray(json) ? 'an array' : typeof json})`,
    );
  }
  return json as Record<string, unknown>;
}
