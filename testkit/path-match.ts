/** Selecting requests by URL path, for faults and for counting logged requests. */

/**
 * A URL path selector: a substring of the path (a full URL selects by its path), a regular
 * expression tested against the path, or a predicate.
 */
export type PathMatch = string | RegExp | ((path: string) => boolean);

/** True when `path` (a URL path such as `/v3/catalog0/page3.json`) is selected by `match`. */
export function matchesPath(match: PathMatch, path: string): boolean {
  if (typeof match === 'function') return match(path);
  if (match instanceof RegExp) {
    match.lastIndex = 0;
    return match.test(path);
  }
  return path.includes(/^https?:\/\//.test(match) ? new URL(match).pathname : match);
}
