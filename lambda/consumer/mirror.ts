import { watermarkKeyOf } from '../contract/keys.js';
import type { SnapshotReader } from '../stores/types.js';
import { parseWatermark, type ManifestLeaf, type Watermark } from './documents.js';
import { NoMirrorError, StoredLeafError } from './errors.js';
import { ErrorCode, hasErrorCode } from '../contract/errors.js';
import { parseStoredLeaf } from './stored-leaf.js';
import type { Ticks } from '../contract/time.js';

/** A mirror to read: an S3 bucket or a local folder (through one {@link SnapshotReader}) and the key prefix. */
export interface Mirror {
  readonly store: SnapshotReader;
  /** `SNAPSHOT_PREFIX` / `--prefix` of the sync that writes it; empty by default. */
  readonly prefix: string;
  /** e.g. `s3://bucket/prefix` or the folder: named in errors. */
  readonly where: string;
  /** The local folder, when the mirror is in one: an error for a folder that holds no mirror then says more. */
  readonly folder?: string;
}

/**
 * The mirror's watermark, or `undefined` while none is written yet (nothing is readable).
 *
 * @throws {@link NoMirrorError} when the mirror's bucket does not exist; {@link MirrorDocumentError} for a watermark
 * that breaks the contract.
 */
export async function readWatermark(mirror: Mirror): Promise<(Watermark & { readonly ticks: Ticks }) | undefined> {
  const key = watermarkKeyOf(mirror.prefix);
  let bytes;
  try {
    bytes = await mirror.store.getBytes(key);
  } catch (error) {
    if (hasErrorCode(error, ErrorCode.s3Put) && (error as { readonly s3Code?: string }).s3Code === 'NoSuchBucket')
      throw new NoMirrorError(mirror.where, mirror.prefix, 'the bucket does not exist', { cause: error });
    throw error;
  }
  return bytes === undefined ? undefined : parseWatermark(bytes, `${mirror.where} ${key}`);
}

/**
 * A leaf of a delivered commit: the manifest's fields (what `JSON.stringify` shows) and its body, read on
 * demand from the mirror.
 */
export class MirrorLeaf implements ManifestLeaf {
  readonly key: string;
  readonly id: string;
  readonly version: string;
  readonly type: ManifestLeaf['type'];
  readonly quarantined?: true;
  readonly #mirror: Mirror;
  readonly #commitKey: string;

  /** `commitKey`: the key of the commit whose manifest lists the leaf, named in errors. */
  constructor(leaf: ManifestLeaf, mirror: Mirror, commitKey: string) {
    this.key = leaf.key;
    this.id = leaf.id;
    this.version = leaf.version;
    this.type = leaf.type;
    if (leaf.quarantined) this.quarantined = true;
    this.#mirror = mirror;
    this.#commitKey = commitKey;
  }

  /**
   * The leaf's bytes exactly as the catalog served them (a UTF-8 byte-order mark included, when it had one).
   *
   * @throws {@link StoredLeafError} for a quarantined leaf (no body is stored; its record is under `quarantine/`) or
   * one whose object is missing, naming its key and commit.
   */
  async body(): Promise<Buffer> {
    if (this.quarantined) throw this.#error('quarantined, no body is stored (see quarantine/)');
    const bytes = await this.#mirror.store.getBytes(this.key);
    if (bytes === undefined) throw this.#error("listed in its commit's manifest but not stored");
    return bytes;
  }

  /**
   * The bytes stored at the leaf's key, or `undefined` when there are none: for a quarantined leaf too, since a
   * stored leaf wins over a quarantine record (`retry-quarantine` may have stored it since the manifest was read).
   */
  storedBody(): Promise<Buffer | undefined> {
    return this.#mirror.store.getBytes(this.key);
  }

  /**
   * The leaf's body as JSON (a leaf is a JSON object), decoded exactly as the follower decoded it before storing it:
   * one leading byte-order mark dropped, strict UTF-8 ({@link parseStoredLeaf}).
   *
   * @throws {@link StoredLeafError} (`CS_ERR_STORED_LEAF`) naming the leaf's key and its commit, as {@link body} does
   * and for bytes the follower would not have stored.
   */
  async json(): Promise<Record<string, unknown>> {
    return parseStoredLeaf(await this.body(), { where: this.#mirror.where, key: this.key, commitKey: this.#commitKey });
  }

  #error(reason: string): StoredLeafError {
    return new StoredLeafError(this.#mirror.where, this.key, this.#commitKey, reason);
  }
}

/** One commit delivered in commit order: the manifest's fields, its key, and its leaves. */
export interface MirrorCommit {
  /** The 12-character commit key: sorts by commit time, and is the idempotency key of the delivery. */
  readonly commitKey: string;
  readonly commitId: string;
  /** The commit timestamp, 7 fractional digits. */
  readonly commitTimeStamp: string;
  /**
   * On a mirror with an id filter (its manifests carry it): how many of the commit's page items the filter left out,
   * so a consumer tells "filtered" from "missing". Absent on an unfiltered mirror. `changes --include/--exclude` adds
   * the leaves its own filter left out.
   */
  readonly filtered?: number;
  readonly leaves: readonly MirrorLeaf[];
}
