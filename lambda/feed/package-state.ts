/**
 * What the feed holds of one package (`feed-state/packages/{lowerid}.json`): which versions' packages are stored and
 * against which leaf they were checked, which wait for the source, which were quarantined, and which are being
 * removed. Its compare-and-swap is the package's guard: one writer per package, no feed-wide lock.
 */
import { FeedError } from './errors.js';

/** A version whose package the feed stores. */
export interface HeldVersion {
  /** The mirror's key of the leaf whose `packageHash`/`packageSize` the stored bytes were checked against. */
  readonly leaf: string;
  /** SHA-512, base64. */
  readonly hash: string;
  readonly size: number;
}

/** A version the source did not serve yet (a CDN behind the catalog), tried again from `due` on. */
export interface WaitingVersion extends HeldVersion {
  /** Epoch ms of the first failed download of this leaf. */
  readonly since: number;
  readonly attempts: number;
  /** Epoch ms of the next try. */
  readonly due: number;
  /** What the source answered: `HTTP 404`, or what failed. */
  readonly reason: string;
}

/** A version whose package is not stored because it cannot be: its record is under `feed-state/quarantine/`. */
export interface QuarantinedVersion {
  readonly leaf: string;
  readonly reason: string;
}

/** `feed-state/packages/{lowerid}.json`. */
export interface PackageState {
  /** The id as the latest view spells it. */
  readonly id: string;
  /** The latest view's `commitKey` of the package this state was made from. */
  readonly viewCommitKey: string;
  /** The base URL the package's documents were written for. */
  readonly baseUrl: string;
  /** By identity version: stored packages. */
  readonly held: Readonly<Record<string, HeldVersion>>;
  readonly waiting: Readonly<Record<string, WaitingVersion>>;
  readonly quarantined: Readonly<Record<string, QuarantinedVersion>>;
  /** Versions whose packages are deleted after this state is written (left until then, so a crash deletes them later). */
  readonly removing: readonly string[];
}

/** The stored bytes of a state: compact JSON in the field order above. */
export function serializeState(state: PackageState): Buffer {
  return Buffer.from(JSON.stringify(state));
}

/** A stored state, checked enough to be built on. */
export function parseState(bytes: Buffer, where: string): PackageState {
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch (cause) {
    throw new FeedError(`${where}: not valid JSON`, { cause });
  }
  const state = value as Partial<PackageState> | null;
  const isRecord = (field: unknown): boolean => typeof field === 'object' && field !== null && !Array.isArray(field);
  if (
    !isRecord(state) ||
    typeof state!.id !== 'string' ||
    typeof state!.viewCommitKey !== 'string' ||
    typeof state!.baseUrl !== 'string' ||
    !isRecord(state!.held) ||
    !isRecord(state!.waiting) ||
    !isRecord(state!.quarantined) ||
    !Array.isArray(state!.removing)
  )
    throw new FeedError(
      `${where}: not a feed package state (needs "id", "viewCommitKey", "baseUrl", "held", "waiting", "quarantined" and "removing")`,
    );
  return state as PackageState;
}
