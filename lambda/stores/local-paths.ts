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
 *
 * `portable` (new folders on a case-insensitive file system, and on Windows) escapes as `escaped` does, and also
 * makes every name one Windows can hold: a name whose first part is a device name (`con`, `prn`, `aux`, `nul`,
 * `com0`–`com9`, `lpt0`–`lpt9`, and `com`/`lpt` with ¹ ² ³; alone or followed by a dot or space: `con.json`,
 * `nul.txt`; after the escaping above, so in any case of the key: `CON` is already `^c^o^n`) gets the mark `^_`
 * after the device word (`con^_`, `con^_.json`), and a name ending in a dot or a space gets `^_` at its end
 * (`foo.^_`). `^_` stands for nothing when read back (`^` followed by `_` is no other escape). Only such names
 * grow, by two bytes each mark, and only they leave the keys' byte order (listings sort keys, never names).
 */
import { CatalogSyncError, ErrorCode } from '../contract/errors.js';

/**
 * Whether file names are the keys themselves, keys with their upper-case letters escaped, or (`portable`) escaped
 * and Windows' reserved names marked too.
 */
export type FileNameMode = 'exact' | 'escaped' | 'portable';

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
 * A device name of Windows at the start of an escaped name, alone or before a dot or space (Windows reads `nul.txt`
 * and `con .json` as the device too): after {@link escapeName} a name holds no upper-case letter, so lower case is
 * every case of the key. From "Naming Files, Paths, and Namespaces" (Win32 file naming conventions).
 */
const WINDOWS_DEVICE = /^(?:con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³])(?=$|[. ])/;
/** The mark that makes a reserved name one Windows can hold; it stands for nothing in the key. */
const WINDOWS_MARK = '^_';

/**
 * The file name of one key segment in a `portable` folder: {@link escapeName}, then the mark `^_` after a Windows
 * device word at its start and after a dot or space at its end (see the module comment).
 */
export function portableName(segment: string): string {
  let name = escapeName(segment);
  const device = WINDOWS_DEVICE.exec(name);
  if (device !== null) name = `${device[0]}${WINDOWS_MARK}${name.slice(device[0].length)}`;
  if (name.endsWith('.') || name.endsWith(' ')) name += WINDOWS_MARK;
  return name;
}

/**
 * The key segment of an escaped file name, the inverse of {@link escapeName}; `undefined` for a name
 * that no key escapes to (catalog-sync never wrote it: `.DS_Store`, `Thumbs.db`, a stray `%41`).
 */
export function unescapeName(name: string): string | undefined {
  const out = decodeName(name, false);
  // `^%41` would read back as `%41`, whose name is `%41`: only the one canonical name stands for a key.
  return out !== undefined && escapeName(out) === name ? out : undefined;
}

/** The key segment of a `portable` file name, the inverse of {@link portableName}; `undefined` for any other name. */
export function unportableName(name: string): string | undefined {
  const out = decodeName(name, true);
  // A mark where portableName puts none (`ab^_`) is not a name of a key.
  return out !== undefined && portableName(out) === name ? out : undefined;
}

/** The escapes of a name undone (`^_` read as nothing when `marks`); undefined for an escape that is none. */
function decodeName(name: string, marks: boolean): string | undefined {
  let out = '';
  for (let i = 0; i < name.length; i++) {
    const c = name[i]!;
    if (c === '^') {
      const next = name[i + 1];
      if (next === undefined) return undefined;
      if (next === '^' || next === '%') out += next;
      else if (next >= 'a' && next <= 'z') out += next.toUpperCase();
      else if (!(marks && next === '_')) return undefined;
      i += 1;
    } else if (c === '%') {
      const hex = name.slice(i + 1, i + 3);
      if (!LOWER_HEX.test(hex)) return undefined;
      out += `%${hex.toUpperCase()}`;
      i += 2;
    } else out += c;
  }
  return out;
}

/** The key segment a file name of a folder in `mode` stands for, or undefined when it stands for none. */
export function segmentOfFileName(name: string, mode: FileNameMode): string | undefined {
  return mode === 'exact' ? name : mode === 'escaped' ? unescapeName(name) : unportableName(name);
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
  const nameOf = mode === 'escaped' ? escapeName : portableName;
  return segments.map((segment) => {
    const name = nameOf(segment);
    const bytes = Buffer.byteLength(name);
    if (bytes > MAX_NAME_BYTES && Buffer.byteLength(segment) <= MAX_NAME_BYTES) {
      throw new FileNameError(
        `key ${JSON.stringify(key)}: its segment ${JSON.stringify(segment)} becomes a ${bytes}-byte file name once escaped ` +
          `for this folder (upper-case letters escaped for a case-insensitive file system, Windows' reserved names marked), ` +
          `more than the ${MAX_NAME_BYTES} a file system takes; use a shorter or lower-case prefix`,
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
    const segment = segmentOfFileName(name, mode);
    if (segment === undefined) return undefined;
    segments.push(segment);
  }
  return segments.join('/');
}
