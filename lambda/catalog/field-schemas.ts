/**
 * The zod schemas of single fields that several documents share: http(s) URLs (with the rules a
 * catalog URL must keep), non-empty strings, counts, timestamps to the tick and `@type` resolved to
 * one leaf type.
 */
import * as z from 'zod';
import { LeafType } from './documents.js';
import { clip, quote } from './json.js';
import { parseTimestamp, type Ticks } from '../contract/time.js';

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

export const httpUrl = z.string().check((ctx) => {
  const problem = urlProblem(ctx.value);
  if (problem !== undefined) ctx.issues.push({ code: 'custom', message: problem, input: ctx.value });
});

export const nonEmptyString = z.string().min(1, { error: 'must not be empty' });

export const nonNegativeInteger = z
  .number()
  .int({ error: (issue) => `expected an integer, got ${String(issue.input)}` })
  .min(0, { error: (issue) => `must not be negative, got ${String(issue.input)}` });

/** A timestamp as written plus its exact ticks. */
export interface Stamp {
  readonly text: string;
  readonly ticks: Ticks;
}

export const timestamp = z.string().transform((text, ctx): Stamp => {
  try {
    return { text, ticks: parseTimestamp(text) };
  } catch (error) {
    // TimestampError's message is `invalid timestamp "…": reason`, which is what the reader needs.
    const message = error instanceof Error ? error.message : String(error);
    ctx.issues.push({ code: 'custom', message, input: text });
    return z.NEVER;
  }
});

const STRINGS = 'a string or an array of strings';
/** The message for a union, which zod would only call "Invalid input". */
export const stringsError = (issue: { readonly input?: unknown }): string =>
  issue.input === undefined ? `missing (expected ${STRINGS})` : `expected ${STRINGS}`;

export const typeList = z.union([z.string(), z.array(z.string())], { error: stringsError });

// A Map, not an object literal, so `__proto__` or `constructor` in hostile input finds nothing.
const LEAF_TYPE_NAMES: ReadonlyMap<string, LeafType> = new Map<string, LeafType>([
  ['PackageDetails', LeafType.details],
  ['nuget:PackageDetails', LeafType.details],
  ['PackageDelete', LeafType.delete],
  ['nuget:PackageDelete', LeafType.delete],
]);

/** The one leaf type among `types`, or a message saying why there is not exactly one. */
export function resolveLeafType(types: readonly string[]): LeafType | { readonly problem: string } {
  let found: LeafType | undefined;
  for (const name of types) {
    const type = LEAF_TYPE_NAMES.get(name);
    if (type === undefined || type === found) continue;
    if (found !== undefined) return { problem: 'has both PackageDetails and PackageDelete; expected exactly one' };
    found = type;
  }
  return found ?? { problem: `expected PackageDetails or PackageDelete, got ${clip(JSON.stringify(types))}` };
}

/** `@type` (a string or an array of strings) resolved to its leaf type, keeping every type name. */
export const leafTypeField = typeList.transform((value, ctx) => {
  const types = typeof value === 'string' ? [value] : value;
  const type = resolveLeafType(types);
  if (typeof type === 'object') {
    ctx.issues.push({ code: 'custom', message: type.problem, input: value });
    return z.NEVER;
  }
  return { types, type };
});
