/**
 * How far a read may go now: the mirror's watermark, or a tighter bound its caller gives (a named consumer's
 * dependencies), and, when that bound is one the mirror is known to hold whole, the listing up to it started at once,
 * side by side with the watermark's read instead of after it (one request fewer in a row before the first commit).
 *
 * Why that is safe only for such a bound: the listing must begin after something proves every manifest up to the
 * bound is stored. The watermark proves it for the commits up to it (the follower writes the manifests first); the
 * cursor of one of catalog-sync's built-in consumers (the latest view) proves it too, since it only ever moves past
 * commits read up to a watermark. A user's consumer may be moved ahead of the watermark on purpose (a seek), so its
 * cursor proves nothing, and a bound below which manifests may still be written is listed only after the watermark.
 */
import { manifestKey } from '../contract/keys.js';
import type { Ticks } from '../contract/time.js';
import type { Watermark } from './documents.js';
import { readWatermark, type Mirror, type MirrorCommit } from './mirror.js';

/** What a caller above the reader (a named consumer) adds: a tighter bound, and a moment when it is idle. */
export interface ReaderHooks {
  /**
   * A commit key the read must not pass besides the watermark (a consumer's dependencies), or `null` when nothing
   * may be read yet. Asked once per pass.
   */
  readonly bound?: () => Promise<string | null>;
  /**
   * Every manifest up to {@link bound} was stored before it was read (it is the cursor of catalog-sync's built-in
   * consumers): the listing up to it begins at once, beside the watermark's read.
   */
  readonly boundIsStored?: boolean;
  /** Called in follow mode each time the read caught up with its bound, before it waits. */
  readonly onIdle?: () => Promise<void>;
  /**
   * The watermark as the caller reads it (a named consumer's check of the place, just made or under way): the first
   * bound is taken from it instead of reading it again, one request in a row fewer before the first commit. Later
   * bounds read it. Its failure (a place that holds no mirror) is the read's.
   */
  readonly watermark?: Promise<(Watermark & { readonly ticks: Ticks }) | undefined>;
  /**
   * Told of each commit as soon as its manifest is read, in whatever order the reads end, before it is delivered (in
   * key order): for work that needs no order, which a slow read of one manifest then holds up for none of the commits
   * after it. Only commits the read will deliver if it goes on (a listing begun beside the watermark's read is told of
   * once that bound is known to hold), and none once the read has ended (returned, failed or its signal aborted), even
   * a manifest read ahead that arrives after it.
   */
  readonly onFetched?: (commit: MirrorCommit) => void;
}

/** The commits of a listing begun before the caller asks for them. */
export interface EarlyCommits {
  readonly commits: AsyncGenerator<MirrorCommit>;
  /** Ends the listing when its commits are not taken after all. */
  close(): Promise<void>;
}

/** A read's bound now; `early`: the commits up to it, already being listed and read. */
export interface ReadBound {
  readonly bound: string | null;
  /** Whether the mirror has a watermark. */
  readonly watermark: boolean;
  readonly early?: EarlyCommits;
}

/**
 * The commit key the read may go up to now (the watermark's, or the hooks' bound when that is lower), whether there
 * is a watermark, and, for a bound {@link ReaderHooks.boundIsStored} past `startAfter`, its commits from
 * `list(bound)` begun beside the watermark's read (kept only when that bound is the one that holds).
 */
export async function readBound(
  mirror: Mirror,
  hooks: ReaderHooks,
  known: ReaderHooks['watermark'],
  startAfter: string | undefined,
  list: (bound: string) => AsyncGenerator<MirrorCommit>,
): Promise<ReadBound> {
  const watermarkRead = known ?? readWatermark(mirror);
  // Awaited below; a failure of the bound first must not leave it unhandled.
  watermarkRead.catch(() => undefined);
  const extra = hooks.bound ? await hooks.bound() : undefined;
  const early =
    hooks.boundIsStored === true &&
    typeof extra === 'string' &&
    (startAfter === undefined || manifestKey(mirror.prefix, extra) > startAfter)
      ? begun(list(extra))
      : undefined;
  let watermark: Watermark | undefined;
  try {
    watermark = await watermarkRead;
  } catch (error) {
    await early?.close();
    throw error;
  }
  if (watermark === undefined || extra === null) {
    await early?.close();
    return { bound: null, watermark: watermark !== undefined };
  }
  const bound = extra !== undefined && extra < watermark.commitKey ? extra : watermark.commitKey;
  if (early !== undefined && bound !== extra) {
    await early.close();
    return { bound, watermark: true };
  }
  return { bound, watermark: true, ...(early === undefined ? {} : { early }) };
}

/** `source` with its first item asked for now (its listing and first reads begin), not when it is iterated. */
function begun(source: AsyncGenerator<MirrorCommit>): EarlyCommits {
  const head = source.next();
  head.catch(() => undefined);
  let taken = false;
  return {
    commits: (async function* () {
      taken = true;
      try {
        const first = await head;
        if (first.done) return;
        yield first.value;
        yield* source;
      } finally {
        await source.return(undefined);
      }
    })(),
    close: async () => {
      if (taken) return;
      await head.catch(() => undefined);
      await source.return(undefined);
    },
  };
}
