/**
 * The checks of single fields that need no zod: what makes a catalog URL acceptable and which leaf type an `@type`
 * list names. The zod field schemas (`field-schemas.ts`) and the fast paths (`fast-path.ts`) both use them, so the
 * two agree by construction; this file loads no zod, so a command that never meets a document the fast path is
 * unsure of never loads it.
 */
import { LeafType } from './documents.js';
import { clip, quote } from './json.js';

const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):/;
const HTTP_PREFIX = /^https?:\/\//i;
// The WHATWG parser silently strips some whitespace and control characters; a catalog URL never
// has any, so their presence means the document is broken or hostile.
const SPACE_OR_CONTROL = /[\s\u0000-\u001f\u007f]/;

/** Why `text` is not an absolute http(s) URL, or undefined when it is one. */
export function urlProblem(text: string): string | undefined {
  if (!HTTP_PREFIX.test(text)) {
    const scheme = SCHEME.exec(text)?.[1];
    return scheme === undefined
      ? `expected an absolute http(s) URL, got the relative reference ${quote(text)}`
      : `expected an http or https URL, got the ${scheme}: URL ${quote(text)}`;
  }
  if (SPACE_OR_CONTROL.test(text)) return `URL contains whitespace or control characters: ${quote(text)}`;
  try {
    if (new URL(text).hostname === '') return `URL has no host: ${quote(text)}`;
  } catch {
    return `not a valid URL: ${quote(text)}`;
  }
  return undefined;
}

const STRINGS = 'a string or an array of strings';
/** The message for a union, which zod would only call "Invalid input". */
export const stringsError = (issue: { readonly input?: unknown }): string =>
  issue.input === undefined ? `missing (expected ${STRINGS})` : `expected ${STRINGS}`;

/** The leaf type of each name that has one. A function, not a table built at load: loading this file does nothing. */
function leafTypeNamed(name: string): LeafType | undefined {
  switch (name) {
    case 'PackageDetails':
    case 'nuget:PackageDetails':
      return LeafType.details;
    case 'PackageDelete':
    case 'nuget:PackageDelete':
      return LeafType.delete;
    default:
      return undefined;
  }
}

/** The one leaf type among `types`, or a message saying why there is not exactly one. */
export function resolveLeafType(types: readonly string[]): LeafType | { readonly problem: string } {
  let found: LeafType | undefined;
  for (const name of types) {
    const type = leafTypeNamed(name);
    if (type === undefined || type === found) continue;
    if (found !== undefined) return { problem: 'has both PackageDetails and PackageDelete; expected exactly one' };
    found = type;
  }
  return found ?? { problem: `expected PackageDetails or PackageDelete, got ${clip(JSON.stringify(types))}` };
}
