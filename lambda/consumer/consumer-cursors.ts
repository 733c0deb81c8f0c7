/**
 * A named consumer's cursor, keyed by its mirror and its name (contract.md, "What is stored where"), read through any
 * cursor store, and the adoption of a cursor stored before consumers were keyed by mirror (`pk` = the name alone).
 */
import { consumerCursorKey, mirrorKeyOf } from '../contract/consumer-keys.js';
import { commitKey as commitKeyOfTicks, manifestKey } from '../contract/keys.js';
import { UNIX_EPOCH_TICKS } from '../contract/time.js';
import type { ConsumerStateStore, CursorState, CursorStore } from '../stores/types.js';
import { parseManifest } from './documents.js';
import type { Mirror } from './mirror.js';

/** The key that tells `mirror`'s consumers from every other mirror's: `s3://{bucket}/{prefix}`, or `./{prefix}`. */
export function mirrorKey(mirror: Mirror): string {
  return mirrorKeyOf(mirror.store.location ?? '.', mirror.prefix);
}

/** The key of the consumer `name`'s cursor (and lease) of `mirror`. */
export function consumerKey(mirror: Mirror, name: string): string {
  return consumerCursorKey(mirrorKey(mirror), name);
}

/** The store's consumer state (leases, listing, adoption), when it keeps one: DynamoStore and the folder's stores do. */
export function consumerStateOf(cursors: CursorStore): (CursorStore & ConsumerStateStore) | undefined {
  const store = cursors as Partial<ConsumerStateStore>;
  const methods = [store.readLease, store.swapLease, store.listConsumers, store.readLegacy, store.adoptLegacy];
  return methods.every((method) => typeof method === 'function')
    ? (cursors as CursorStore & ConsumerStateStore)
    : undefined;
}

/**
 * The consumer's cursor as others see it (a dependency, the lag): the one under its key, or, while it has none, a
 * cursor stored under its name alone that no other mirror's consumer adopted (its own, not yet moved).
 */
export async function readConsumerCursor(
  cursors: CursorStore,
  mirror: Mirror,
  name: string,
): Promise<CursorState | undefined> {
  const key = consumerKey(mirror, name);
  const own = await cursors.read(key);
  if (own !== undefined) return own;
  const legacy = await consumerStateOf(cursors)?.readLegacy(name);
  return legacy !== undefined && (legacy.adoptedBy === undefined || legacy.adoptedBy === key)
    ? legacy.state
    : undefined;
}

/**
 * The consumer's cursor, for the consumer itself: the one under its key; while it has none, a cursor stored under
 * its name alone is adopted, once, by the first mirror that holds the commit it names (the manifest at its commit
 * key, with its commit id): the legacy item is marked `adoptedBy` this key (a conditional write; another mirror's
 * consumer of the same name then starts afresh), and its value written under this key with `runId`.
 */
export async function openConsumerCursor(
  cursors: CursorStore,
  mirror: Mirror,
  name: string,
  runId: string,
): Promise<CursorState | undefined> {
  const key = consumerKey(mirror, name);
  const own = await cursors.read(key);
  const state = consumerStateOf(cursors);
  if (own !== undefined || state === undefined) return own;
  const legacy = await state.readLegacy(name);
  if (legacy === undefined || (legacy.adoptedBy !== undefined && legacy.adoptedBy !== key)) return undefined;
  if (!(await holdsCommit(mirror, legacy.state))) return undefined;
  if (!(await state.adoptLegacy(name, key))) return undefined;
  const target = { value: legacy.state.value, commitId: legacy.state.commitId ?? '', runId };
  const written = await cursors.compareAndSet(key, undefined, target);
  // Another instance adopted it at the same moment: its copy is the same cursor.
  return written.outcome === 'written' ? { ...legacy.state, runId } : written.current;
}

/** True when the mirror holds the commit a cursor names (its manifest, with the same commit id when one is stored). */
async function holdsCommit(mirror: Mirror, cursor: CursorState): Promise<boolean> {
  if (cursor.value < UNIX_EPOCH_TICKS) return true;
  const key = commitKeyOfTicks(cursor.value);
  const where = manifestKey(mirror.prefix, key);
  const bytes = await mirror.store.getBytes(where);
  if (bytes === undefined) return false;
  try {
    const manifest = parseManifest(bytes, key, `${mirror.where} ${where}`);
    return cursor.commitId === undefined || cursor.commitId === manifest.commitId;
  } catch {
    return false;
  }
}
