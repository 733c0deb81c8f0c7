/**
 * What a request to the feed server names: the key of one object under `{prefix}feed/` (docs/contract.md, "The
 * feed"), and how that object is described to a client (its type and how long it may be cached).
 *
 * A request's path is read as S3 reads an object's URL behind CloudFront: each `/`-separated segment is
 * percent-decoded, and the key is `{prefix}feed/` followed by the segments. A path that could leave the feed's
 * folder, or name no object at all, names nothing (the server answers 404): a segment that is empty, `.` or `..`
 * (also when percent-encoded: `%2e%2e`), that holds a `/` or `\` (`%2f`, `%5c`), a NUL or another control
 * character, or that is not valid percent-encoding; a target that is not a path (`*`, `host:port`). An absolute
 * target (`GET http://host/x`) is read by its path. Dot segments are never resolved: `/flat/../index.json` is
 * refused, not served as `/index.json`.
 */

/** The folder of a mirror (under its prefix) that holds everything a NuGet client reads; nothing else is served. */
export const FEED_FOLDER = 'feed/';

/** How long a client or a proxy may keep an index (`*.json`): a new version reaches clients this soon after it is written. */
export const INDEX_MAX_AGE_SECONDS = 60;

/** `Cache-Control` of a package: its bytes under one key never change (a new version is a new key). */
export const PACKAGE_CACHE_CONTROL = 'public, max-age=31536000, immutable';

/** `Cache-Control` of every other object of the feed (the indexes): short, so that new versions appear soon. */
export const INDEX_CACHE_CONTROL = `public, max-age=${INDEX_MAX_AGE_SECONDS}`;

/** Controls and separators that no key segment of a feed holds. */
const REFUSED = /[\u0000-\u001f\u007f/\\]/;
/** An absolute request target: `scheme://authority` and then the path. */
const ABSOLUTE_FORM = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i;

/**
 * The key a request target names under `{prefix}feed/`, or `undefined` when it names none (see the module comment).
 *
 * @param prefix the mirror's key prefix (`--prefix`), `''` or ending as the user gave it
 * @param target the request target as received (`req.url`): still percent-encoded, maybe with a query
 */
export function feedKeyOf(prefix: string, target: string): string | undefined {
  let path = target.replace(ABSOLUTE_FORM, '');
  const end = path.search(/[?#]/);
  if (end >= 0) path = path.slice(0, end);
  if (!path.startsWith('/')) return undefined;
  const segments: string[] = [];
  for (const raw of path.slice(1).split('/')) {
    let segment: string;
    try {
      segment = decodeURIComponent(raw);
    } catch {
      return undefined;
    }
    if (segment === '' || segment === '.' || segment === '..' || REFUSED.test(segment)) return undefined;
    segments.push(segment);
  }
  return `${prefix}${FEED_FOLDER}${segments.join('/')}`;
}

/** Whether a key is a package (`….nupkg`): immutable, served in ranges, never compressed (it is a zip already). */
export function isPackage(key: string): boolean {
  return key.endsWith('.nupkg');
}

/** Whether a key is a JSON document (an index): short-lived, compressed for a client that asks. */
export function isJson(key: string): boolean {
  return key.endsWith('.json');
}

/** `Content-Type` of a key: JSON for `.json`, bytes for anything else (NuGet clients do not check it). */
export function contentTypeOf(key: string): string {
  return isJson(key) ? 'application/json' : 'application/octet-stream';
}

/** `Cache-Control` of a key: immutable for a package, short for anything else. */
export function cacheControlOf(key: string): string {
  return isPackage(key) ? PACKAGE_CACHE_CONTROL : INDEX_CACHE_CONTROL;
}
