/**
 * How S3 keys become file names in the local folder of the embedded default.
 *
 * On a case-sensitive file system a key is its own path (`exact`). On a case-insensitive one (macOS and
 * Windows by default) that would merge keys differing only in case, and base-62 commit keys do
 * (`001e9fzMHc3F` and `001e9fzmHc3F` are 26 s apart), so there every `/`-separated segment is `escaped`:
 *
 * | in the key | in the file name | why |
 * |---|---|---|
 * | `A`–`Z` | `^a`–`^z` | no upper-case letter is left to fold |
 * | `%` and two of `0-9A-F` (`%2E`) | `%` and the two lowered (`%2e`) | percent-encoded ids and versions keep their length |
 * | `^` | `^^` | the escape character itself |
 * | any other `%` | `^%` | a `%2e` of the key must not read back as `%2E` |
 * | anything else | itself | |
 *
 * The escaping is injective, and a file name is read back only when it is exactly the escaping of its
 * key, so two files never report the same key. Names of escaped keys hold no upper-case ASCII letter, so
 * distinct keys stay distinct under case folding. It keeps the byte order of every key catalog-sync
 * writes (fixed words, base-62 commit keys, `a-z 0-9 . _ -` and `%XX` in ids and versions, under a
 * prefix of `a-z A-Z 0-9 . _ - /`): `%` sorts before every other character both ways, and `^` sits where
 * the upper-case letters do, between `9` and `_`. Only upper-case letters grow (to two bytes): id and
 * version segments never, a commit key from 12 to at most 24 characters.
 */
import { CatalogSyncError, ErrorCode } from '../contract/errors.js';

/** Whether file names are the keys themselves, or keys with their upper-case letters escaped. */
export type FileNameMode = 'exact' | 'escaped';

/** The longest file name, in bytes, that ext4, APFS and NTFS all take (255 UTF-8 bytes / UTF-16 units). */
export const MAX_NAME_BYTES = 255;

/** A key whose escaped file name would be too long for the file system. */
export class FileNameError extends CatalogSyncError {
  override readonly name = 'FileNameError';
  override get code(): ErrorCode {
    return ErrorCode.fileName;
  }
}

const UPPER_HEX = /^[0-9A-F]{2}$/;
const LOWER_HEX = /^[0-9a-f]{2}$/;

/** The file name of one key segment on a case-insensitive file system (see the module comment). */
export function escapeName(segment: string): string {
  let out = '';
  for (let i = 0; i < segment.length; i++) {
    const c = segment[i]!;
    if (c === '%') {
      const hex = segment.slice(i + 1, i + 3);
      if (UPPER_HEX.test(hex)) {
        out += `%${hex.toLowerCase()}`;
        i += 2;
      } else {
        out += '^%';
      }
    } else if (c === '^') out += '^^';
    else if (c >= 'A' && c <= 'Z') out += `^${c.toLowerCase()}`;
    else out += c;
  }
  return out;
}

/**
 * The key segment of an escaped file name, the inverse of {@link escapeName}; `undefined` for a name
 * that no key escapes to (catalog-sync never wrote it: `.DS_Store`, `Thumbs.db`, a stray `%41`).
 */
export function unescapeName(name: string): string | undefined {
  let out = '';
  for (let i = 0; i < name.length; i++) {
    const c = name[i]!;
    if (c === '^') {
      const next = name[i + 1];
      if (next === undefined) return undefined;
      if (next === '^' || next === '%') out += next;
      else if (next >= 'a' && next <= 'z') out += next.toUpperCase();
      else return undefined;
      i += 1;
    } else if (c === '%') {
      const hex = name.slice(i + 1, i + 3);
      if (!LOWER_HEX.test(hex)) return undefined;
      out += `%${hex.toUpperCase()}`;
      i += 2;
    } else out += c;
  }
  // `^%41` would read back as `%41`, whose name is `%41`: only the one canonical name stands for a key.
  return escapeName(out) === name ? out : undefined;
}

/**
 * The file names, one per `/`-separated segment, that a key is stored under.
 *
 * @throws {@link FileNameError} when escaping makes a segment longer than {@link MAX_NAME_BYTES} although
 * the key's own segment fits: only upper-case letters grow, so only a `--prefix` segment can.
 */
export function fileNamesOf(key: string, mode: FileNameMode): string[] {
  const segments = key.split('/');
  if (mode === 'exact') return segments;
  return segments.map((segment) => {
    const name = escapeName(segment);
    const bytes = Buffer.byteLength(name);
    if (bytes > MAX_NAME_BYTES && Buffer.byteLength(segment) <= MAX_NAME_BYTES) {
      throw new FileNameError(
        `key ${JSON.stringify(key)}: its segment ${JSON.stringify(segment)} becomes a ${bytes}-byte file name once its upper-case letters are escaped ` +
          `for this case-insensitive folder, more than the ${MAX_NAME_BYTES} a file system takes; use a shorter or lower-case prefix`,
      );
    }
    return name;
  });
}

/** The key stored under these file names, the inverse of {@link fileNamesOf}; `undefined` if none is. */
export function keyOfFileNames(names: readonly string[], mode: FileNameMode): string | undefined {
  if (mode === 'exact') return names.join('/');
  const segments: string[] = [];
  for (const name of names) {
    const segment = unescapeName(name);
    if (segment === undefined) return undefined;
    segments.push(segment);
  }
  return segments.join('/');
}
