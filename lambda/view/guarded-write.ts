import { serializeIndex, type PackageIndex } from './package-index.js';
import { ViewError } from './errors.js';
import type { ViewDocuments } from './view-documents.js';

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

/**
 * Writes the index `make` builds from the stored one, unless the stored one already reflects `commitKey` or a
 * newer commit: read, build, write conditional on what was read, and on a lost condition read again. A slow writer
 * whose read is stale can therefore never put back an older state: its write is refused, and its next read finds
 * the newer commit and stops (`current`).
 */
export async function writeGuarded(
  documents: ViewDocuments,
  key: string,
  commitKey: string,
  make: (previous: PackageIndex | undefined) => PackageIndex,
  options: GuardedWriteOptions = {},
): Promise<GuardedOutcome> {
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const stored = await documents.read(key);
    const previous = stored === undefined ? undefined : parseIndex(stored.bytes, `${documents.where} ${key}`);
    if (
      previous !== undefined &&
      (previous.commitKey > commitKey || (previous.commitKey === commitKey && options.replaceSame !== true))
    )
      return 'current';
    const bytes = serializeIndex(make(previous));
    if (stored?.bytes.equals(bytes)) return 'current';
    await options.beforeWrite?.(key);
    if (await documents.writeIf(key, bytes, stored?.tag)) return 'written';
  }
  throw new ViewError(
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
