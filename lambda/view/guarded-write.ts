import { serializeIndex, type PackageIndex } from './package-index.js';
import { ViewError } from './errors.js';
import type { ConditionalWrite, ViewDocuments } from './view-documents.js';

/** A compare-and-swap that keeps failing this often means something else writes the key in a loop. */
const MAX_ATTEMPTS = 20;

/** What a guarded write did. */
export type GuardedOutcome = 'written' | 'current';

/** Options of {@link writeGuarded}. */
export interface GuardedWriteOptions {
  /** Rebuild: replace a stored index of the same commit too (a damaged one is repaired); never a newer one. */
  readonly replaceSame?: boolean;
  /** Called after the read and before the conditional write (tests hold a writer here to stage the race). */
  readonly beforeWrite?: (key: string) => Promise<void> | void;
}

/** Builds a package's index from the stored one (`undefined`: none yet); may wait for what it needs (leaf bodies). */
export type MakeIndex = (previous: PackageIndex | undefined) => PackageIndex | Promise<PackageIndex>;

/**
 * Writes the index `make` builds from the stored one, unless the stored one already reflects `commitKey` or a
 * newer commit: read, build, write conditional on what was read, and on a lost condition read again. A slow writer
 * whose read is stale can therefore never put back an older state: its write is refused, and its next read finds
 * the newer commit and stops (`current`). A write refused although it was stored (its answer lost, and the retried
 * PUT then refused by its own write) finds its own bytes on the next read: `written`.
 */
export async function writeGuarded(
  documents: ViewDocuments,
  key: string,
  commitKey: string,
  make: MakeIndex,
  options: GuardedWriteOptions = {},
): Promise<GuardedOutcome> {
  let sent: Buffer | undefined;
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const step = await prepare(documents, { key, commitKey, make }, options, sent);
    if ('outcome' in step) return step.outcome;
    if (await documents.writeIf(key, step.write.bytes, step.write.expected)) return 'written';
    sent = step.write.bytes;
  }
  throw lostTooOften(documents, key);
}

/** One package of {@link writeGuardedMany}. */
export interface GuardedItem {
  readonly key: string;
  readonly commitKey: string;
  readonly make: MakeIndex;
}

/**
 * {@link writeGuarded} of many packages. Where the documents write many at once (a folder: one lock a round), in
 * rounds: every index read and built, then written together; the writes that lost go again in the next round.
 * Elsewhere (S3), each package on its own at once, its write as soon as it is built.
 */
export async function writeGuardedMany(
  documents: ViewDocuments,
  items: readonly GuardedItem[],
  options: GuardedWriteOptions = {},
): Promise<GuardedOutcome[]> {
  if (documents.writeMany === undefined)
    return allSettled(items.map((item) => writeGuarded(documents, item.key, item.commitKey, item.make, options)));
  const outcomes: GuardedOutcome[] = new Array(items.length);
  let pending = items.map((_item, i) => ({ i, sent: undefined as Buffer | undefined }));
  for (let attempt = 0; pending.length > 0; attempt++) {
    if (attempt === MAX_ATTEMPTS) throw lostTooOften(documents, items[pending[0]!.i]!.key);
    const steps = await allSettled(pending.map(({ i, sent }) => prepare(documents, items[i]!, options, sent)));
    const writes: { i: number; write: ConditionalWrite }[] = [];
    steps.forEach((step, n) => {
      if ('outcome' in step) outcomes[pending[n]!.i] = step.outcome;
      else writes.push({ i: pending[n]!.i, write: step.write });
    });
    const placed = await documents.writeMany(writes.map(({ write }) => write));
    pending = [];
    writes.forEach(({ i, write }, n) => {
      if (placed[n]) outcomes[i] = 'written';
      else pending.push({ i, sent: write.bytes });
    });
  }
  return outcomes;
}

/** Read and build: the outcome when there is nothing to write, or the conditional write to make. */
async function prepare(
  documents: ViewDocuments,
  item: GuardedItem,
  options: GuardedWriteOptions,
  sent: Buffer | undefined,
): Promise<{ outcome: GuardedOutcome } | { write: ConditionalWrite }> {
  const { key, commitKey } = item;
  const stored = await documents.read(key);
  if (sent !== undefined && stored?.bytes.equals(sent)) return { outcome: 'written' };
  const previous = stored === undefined ? undefined : parseIndex(stored.bytes, `${documents.where} ${key}`);
  if (
    previous !== undefined &&
    (previous.commitKey > commitKey || (previous.commitKey === commitKey && options.replaceSame !== true))
  )
    return { outcome: 'current' };
  const bytes = serializeIndex(await item.make(previous));
  if (stored?.bytes.equals(bytes)) return { outcome: 'current' };
  await options.beforeWrite?.(key);
  return { write: { key, bytes, expected: stored?.tag } };
}

/** `Promise.all` that settles every promise before it throws the first failure: no request is left running. */
async function allSettled<T>(promises: readonly Promise<T>[]): Promise<T[]> {
  const settled = await Promise.allSettled(promises);
  const failed = settled.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
  if (failed !== undefined) throw failed.reason;
  return settled.map((outcome) => (outcome as PromiseFulfilledResult<T>).value);
}

function lostTooOften(documents: ViewDocuments, key: string): ViewError {
  return new ViewError(
    `${documents.where} ${key}: the conditional write lost ${MAX_ATTEMPTS} times in a row to other writers`,
  );
}

/** A stored index, checked enough to be trusted as the base of the next one. */
export function parseIndex(bytes: Buffer, where: string): PackageIndex {
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch (cause) {
    throw new ViewError(`${where}: not valid JSON`, { cause });
  }
  const index = value as Partial<PackageIndex> | null;
  if (
    typeof index !== 'object' ||
    index === null ||
    typeof index.id !== 'string' ||
    typeof index.commitKey !== 'string' ||
    typeof index.commitTimeStamp !== 'string' ||
    !Array.isArray(index.versions)
  ) {
    throw new ViewError(`${where}: not a package index (needs "id", "commitKey", "commitTimeStamp" and "versions")`);
  }
  return index as PackageIndex;
}
