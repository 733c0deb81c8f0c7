/**
 * The planner's listing of `commits/` up to the bound, in parallel where the store lists by pages (S3): commit keys
 * are time-sortable, so the time from the first commit to the bound is cut into slices listed at once, and a slice
 * still listing after `splitAfter` keys (a dense stretch: an import day, a reflow) has its rest split in two
 * (time bisection). A folder lists once (its listing reads the whole folder anyway).
 */
import { commitKeyOfManifestKey } from '../../consumer/documents.js';
import type { Mirror } from '../../consumer/mirror.js';
import { commitKey as commitKeyOfTicks, decodeCommitKey, manifestKey } from '../../contract/keys.js';
import { ViewError } from '../errors.js';
import type { ManifestSlice } from './cut-manifests.js';

/** Options of {@link listManifestSlices}. */
export interface ListManifestsOptions {
  /** Keys a slice keeps as marks: one every `step` (and its last). */
  readonly step: number;
  /** Time slices at the start (default 1: one listing from the first manifest). */
  readonly slices?: number;
  /** Listings in flight at once (default: `slices`). */
  readonly inFlight?: number;
  /** Keys a slice lists before the rest of it is split in two (default 20,000: 20 pages of S3's listing). */
  readonly splitAfter?: number;
  /** Stops the listing (it then throws). */
  readonly signal?: AbortSignal;
}

/** One stretch to list: commit keys in (after, through]. */
interface Stretch {
  readonly after: string | null;
  readonly through: string;
}

/**
 * The manifests with commit keys up to `throughKey` (inclusive), as slices in commit order: counts and marks, for
 * {@link cutManifestRanges}. Keys under `commits/` that are not manifests are passed over, as the reader does.
 */
export async function listManifestSlices(
  mirror: Mirror,
  throughKey: string,
  options: ListManifestsOptions,
): Promise<ManifestSlice[]> {
  const slices = Math.max(1, options.slices ?? 1);
  const inFlight = Math.max(1, options.inFlight ?? slices);
  const splitAfter = Math.max(1, options.splitAfter ?? 20_000);
  const initial = slices === 1 ? [{ after: null, through: throughKey }] : await timeSlices(mirror, throughKey, slices);
  const found: { readonly after: string; readonly slice: ManifestSlice }[] = [];
  const queue: Stretch[] = [...initial];
  let active = 0;
  await new Promise<void>((resolve, reject) => {
    let failed = false;
    const pump = (): void => {
      while (!failed && active < inFlight && queue.length > 0) {
        const stretch = queue.shift()!;
        active++;
        listStretch(mirror, stretch, options.step, splitAfter, options.signal).then(
          ({ slice, rest }) => {
            active--;
            found.push({ after: stretch.after ?? '', slice });
            queue.push(...rest);
            pump();
          },
          (error: unknown) => {
            failed = true;
            reject(error);
          },
        );
      }
      if (!failed && active === 0 && queue.length === 0) resolve();
    };
    pump();
  });
  return found.sort((a, b) => (a.after < b.after ? -1 : a.after > b.after ? 1 : 0)).map(({ slice }) => slice);
}

/** `slices` stretches of equal time from the first manifest to `throughKey`; none when there is no manifest. */
async function timeSlices(mirror: Mirror, throughKey: string, slices: number): Promise<Stretch[]> {
  let first: string | undefined;
  for await (const key of mirror.store.listKeys(`${mirror.prefix}commits/`)) {
    first = commitKeyOfManifestKey(mirror.prefix, key);
    if (first !== undefined) break;
  }
  if (first === undefined || first > throughKey) return [];
  const from = decodeCommitKey(first);
  const to = decodeCommitKey(throughKey);
  const bounds: string[] = [];
  for (let i = 1; i < slices; i++) {
    const bound = commitKeyOfTicks(from + ((to - from) * BigInt(i)) / BigInt(slices));
    if (bound < throughKey && bound >= first && bound !== bounds.at(-1)) bounds.push(bound);
  }
  const stretches: Stretch[] = [];
  let after: string | null = null;
  for (const bound of [...bounds, throughKey]) {
    stretches.push({ after, through: bound });
    after = bound;
  }
  return stretches;
}

/** Lists one stretch: its slice, and the rest of it split in two when it held more than `splitAfter` keys. */
async function listStretch(
  mirror: Mirror,
  stretch: Stretch,
  step: number,
  splitAfter: number,
  signal: AbortSignal | undefined,
): Promise<{ slice: ManifestSlice; rest: Stretch[] }> {
  const marks: { at: number; key: string }[] = [];
  let count = 0;
  let last: string | undefined;
  let rest: Stretch[] = [];
  const startAfter = stretch.after === null ? undefined : manifestKey(mirror.prefix, stretch.after);
  for await (const key of mirror.store.listKeys(`${mirror.prefix}commits/`, startAfter)) {
    if (signal?.aborted) throw new ViewError(`${mirror.where}: the listing of commits/ was stopped`);
    const commitKey = commitKeyOfManifestKey(mirror.prefix, key);
    if (commitKey === undefined) continue;
    if (commitKey > stretch.through) break;
    count++;
    last = commitKey;
    if (count % step === 0) marks.push({ at: count, key: commitKey });
    if (count >= splitAfter && commitKey < stretch.through) {
      rest = bisect(commitKey, stretch.through);
      if (rest.length > 0) break;
    }
  }
  if (last !== undefined && marks.at(-1)?.at !== count) marks.push({ at: count, key: last });
  return { slice: { count, marks }, rest };
}

/** (after, through] in two halves of time, or none when no commit key lies strictly between them. */
function bisect(after: string, through: string): Stretch[] {
  const from = decodeCommitKey(after);
  const to = decodeCommitKey(through);
  const middle = commitKeyOfTicks(from + (to - from) / 2n);
  if (middle <= after || middle >= through) return [{ after, through }];
  return [
    { after, through: middle },
    { after: middle, through },
  ];
}
