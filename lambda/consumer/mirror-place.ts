/**
 * Whether a place (a folder or a bucket, and a prefix) holds a mirror, told from what the follower writes there:
 *
 * - **ready**: `{prefix}watermark.json` is there: every commit up to it can be read;
 * - **empty**: no `watermark.json` yet, but a manifest under `{prefix}commits/` or a leaf under `{prefix}leaves/`: the
 *   follower (or a backfill) is storing its first commits, and a reader that follows waits for the watermark;
 * - otherwise the place holds **no mirror**: most often a wrong folder, bucket or prefix, and an error
 *   ({@link NoMirrorError}) rather than an empty read or a wait for ever.
 *
 * Only reads: looking never writes anything anywhere.
 */
import { readdir, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { watermarkKeyOf } from '../contract/keys.js';
import { NoMirrorError } from './errors.js';
import type { Ticks } from '../contract/time.js';
import type { Watermark } from './documents.js';
import { readWatermark, type Mirror } from './mirror.js';

/** What a place holds: commits up to a watermark, or a mirror with none yet. */
export const MirrorState = {
  /** `watermark.json` is there. */
  ready: 'ready',
  /** Manifests or leaves, but no `watermark.json` yet: no commit can be read yet. */
  empty: 'empty',
} as const;
/** One of {@link MirrorState}'s values. */
export type MirrorState = (typeof MirrorState)[keyof typeof MirrorState];

/**
 * What the place of `mirror` holds.
 *
 * @throws {@link NoMirrorError} (`CS_ERR_NO_MIRROR`) when it holds no mirror, naming the place, what is missing and
 * what was found near it (the folder's absence, a mirror under another prefix or in a parent folder, a missing bucket).
 */
export async function checkMirror(mirror: Mirror): Promise<MirrorState> {
  return (await readMirrorPlace(mirror)).state;
}

/**
 * {@link checkMirror}, with the watermark it read (a consumer's first read bounds itself by it rather than reading it
 * again: one request in a row fewer at its start).
 *
 * @throws {@link NoMirrorError} as {@link checkMirror} does.
 */
export async function readMirrorPlace(
  mirror: Mirror,
): Promise<{ readonly state: MirrorState; readonly watermark?: Watermark & { readonly ticks: Ticks } }> {
  const watermark = await readWatermark(mirror);
  if (watermark !== undefined) return { state: MirrorState.ready, watermark };
  if (await holdsMirrorKeys(mirror)) return { state: MirrorState.empty };
  throw await noMirrorError(mirror);
}

/** Whether the place holds a manifest or a leaf (whatever its watermark): the follower has stored something there. */
export async function holdsMirrorKeys(mirror: Mirror): Promise<boolean> {
  for (const folder of ['commits/', 'leaves/']) {
    for await (const _ of mirror.store.listKeys(`${mirror.prefix}${folder}`)) return true;
  }
  return false;
}

/** The error for a place that holds no mirror, with what was found near it. */
export async function noMirrorError(mirror: Mirror): Promise<NoMirrorError> {
  return new NoMirrorError(mirror.where, mirror.prefix, await hintOf(mirror));
}

/** What is near a place that holds no mirror, as a hint; undefined when nothing was found. */
async function hintOf(mirror: Mirror): Promise<string | undefined> {
  if (mirror.folder !== undefined && !(await exists(mirror.folder))) return 'the folder does not exist';
  // A prefix too long (or given where none is needed): a mirror at one of its parent prefixes.
  const segments = mirror.prefix.split('/').slice(0, -1);
  for (let n = segments.length - 1; n >= 0; n--) {
    const parent = segments
      .slice(0, n)
      .map((segment) => `${segment}/`)
      .join('');
    if ((await mirror.store.getBytes(watermarkKeyOf(parent))) !== undefined)
      return parent === ''
        ? 'there is a mirror here with no prefix'
        : `there is a mirror here under the prefix ${JSON.stringify(parent)}`;
  }
  if (mirror.folder === undefined) return undefined;
  // A prefix forgotten: a mirror in a folder of this one.
  if (mirror.prefix === '') {
    const entries = await readdir(mirror.folder, { withFileTypes: true }).catch(() => []);
    for (const entry of entries)
      if (entry.isDirectory() && (await exists(join(mirror.folder, entry.name, 'watermark.json'))))
        return `there is a mirror here under the prefix ${JSON.stringify(`${entry.name}/`)}`;
  }
  // A folder inside a mirror (`catalog-data/commits`): the mirror in a folder above it.
  for (let dir = dirname(mirror.folder); dir !== dirname(dir); dir = dirname(dir)) {
    if (await exists(join(dir, 'watermark.json'))) return `the folder lies inside the mirror in ${dir}`;
  }
  return undefined;
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}
