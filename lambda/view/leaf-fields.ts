/** The fields of a details leaf that consumers filter on, as the view keeps them. */

/** What the view keeps of a details leaf's body. */
export interface LeafFields {
  readonly listed: boolean;
  /** The leaf's `deprecation` without JSON-LD keys (`@id`, `@type`): `reasons`, `message`, `alternatePackage`. */
  readonly deprecation?: Readonly<Record<string, unknown>>;
  /** The leaf's `vulnerabilities` (`advisoryUrl`, `severity`), without JSON-LD keys; absent when it has none. */
  readonly vulnerabilities?: readonly Readonly<Record<string, unknown>>[];
}

/**
 * The filter fields of a details leaf body. `listed` is the leaf's own when it has one; older leaves have none,
 * and then, as nuget.org's own readers do, a `published` date in 1900 means unlisted.
 */
export function leafFieldsOf(body: unknown): LeafFields {
  const leaf = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  const listed =
    typeof leaf['listed'] === 'boolean'
      ? leaf['listed']
      : !(typeof leaf['published'] === 'string' && leaf['published'].startsWith('1900-'));
  const deprecation = isObject(leaf['deprecation']) ? withoutLinkedData(leaf['deprecation']) : undefined;
  const vulnerabilities =
    Array.isArray(leaf['vulnerabilities']) && leaf['vulnerabilities'].length > 0
      ? leaf['vulnerabilities'].filter(isObject).map(withoutLinkedData)
      : undefined;
  return {
    listed,
    ...(deprecation === undefined ? {} : { deprecation }),
    ...(vulnerabilities === undefined ? {} : { vulnerabilities }),
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A copy without `@id`/`@type`/`@context` (per-document URLs that differ between two copies of one state), nested too. */
function withoutLinkedData(value: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, field] of Object.entries(value)) {
    if (name.startsWith('@')) continue;
    out[name] = isObject(field) ? withoutLinkedData(field) : field;
  }
  return out;
}
