/**
 * The rebuild's ranges, cut from the listing of the manifests: each of about `rangeManifests` manifests, in commit
 * order, with exact counts. The listing keeps no key but one every `step` (its marks), so 4 M manifests cost a few
 * thousand strings, not 4 M.
 */
import type { RebuildRange } from '../../contract/view-rebuild.js';

/** A stretch of the listing in commit order: how many manifests, and some of their commit keys with their place. */
export interface ManifestSlice {
  /** Manifests in it. */
  readonly count: number;
  /**
   * Commit keys at known places (1-based within the slice), ascending; the slice's last manifest is always one
   * (at `count`) when it has any.
   */
  readonly marks: readonly { readonly at: number; readonly key: string }[];
}

/** The places a slice keeps as marks when listing with ranges of `rangeManifests`: about 32 a range. */
export function markStep(rangeManifests: number): number {
  return Math.max(1, Math.floor(rangeManifests / 32));
}

/**
 * Ranges (lo, hi] over the slices in order, each closed at the first mark where it holds `rangeManifests` or more
 * (so a range holds at most `rangeManifests + step - 1`), the last one at the last manifest. Range 0 starts after
 * `startAfter` (null: at the first manifest).
 */
export function cutManifestRanges(
  slices: readonly ManifestSlice[],
  rangeManifests: number,
  startAfter: string | null = null,
): RebuildRange[] {
  const ranges: RebuildRange[] = [];
  let lo = startAfter;
  let since = 0;
  let last: string | undefined;
  for (const slice of slices) {
    let at = 0;
    for (const mark of slice.marks) {
      since += mark.at - at;
      at = mark.at;
      last = mark.key;
      if (since >= rangeManifests) {
        ranges.push({ n: ranges.length, lo, hi: mark.key, manifests: since });
        lo = mark.key;
        since = 0;
      }
    }
    if (at !== slice.count)
      throw new RangeError(`a slice of ${slice.count} manifests must end with a mark at its last`);
  }
  if (since > 0 && last !== undefined) ranges.push({ n: ranges.length, lo, hi: last, manifests: since });
  return ranges;
}
