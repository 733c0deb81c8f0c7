/**
 * Validation of every catalog document: service index, catalog index, catalog page and leaf.
 *
 * Everything fetched is untrusted input (contract: "Untrusted input"). Each `parse…` function takes
 * the raw body and the URL it came from and returns a typed, validated object, or throws
 * {@link InvalidDocumentError} naming the URL, the JSON path and the problem. Besides the shape of
 * each document, the checks that the protocol's guarantees rest on are enforced here (one commit per
 * timestamp, nothing newer than its container, no duplicates, a leaf matching the page item that
 * pointed at it), so the sync engine can rely on them instead of re-checking.
 *
 * Zod checks shapes; the cross-item checks are plain loops over maps, so a hostile page with a
 * million items is still parsed in linear time.
 */
import { z } from 'zod';
import { DocumentKind, InvalidDocumentError } from './errors.js';
import { comparableVersion, identityKeyProblem } from '../contract/identity.js';
import { parseTimestamp, type Ticks } from '../contract/time.js';

// ---------------------------------------------------------------------------------------------
// Public types
// ---------------------------------------------------------------------------------------------

/** The two leaf types. Each leaf and each page item has exactly one. */
export const LeafType = { details: 'PackageDetails', delete: 'PackageDelete' } as const;
/** `'PackageDetails'` or `'PackageDelete'`. */
export type LeafType = (typeof LeafType)[keyof typeof LeafType];

/** What a source URL points at, told by content (contract: `resources` vs `items`). */
export const SourceKind = { serviceIndex: 'service-index', catalogIndex: 'catalog-index' } as const;
/** `'service-index'` or `'catalog-index'`. */
export type SourceKind = (typeof SourceKind)[keyof typeof SourceKind];

/** A raw response body: bytes as served (after HTTP decompression) or already decoded text. */
export type DocumentBody = string | Uint8Array;

/** One entry of a service index's `resources`. */
export interface ServiceIndexResource {
  /** The resource's URL: absolute, http or https. */
  readonly '@id': string;
  /** The resource type, e.g. `Catalog/3.0.0`; some sources give several. */
  readonly '@type': string | string[];
}

/** A package source's service index (nuget.org: `https://api.nuget.org/v3/index.json`). */
export interface ServiceIndex {
  /** The service index schema version, e.g. `3.0.0`. */
  readonly version?: string;
  /** The resources the source offers. */
  readonly resources: ServiceIndexResource[];
}

/** One page as listed in the catalog index. */
export interface CatalogIndexEntry {
  /** The page URL (its `@id`): absolute, http or https. */
  readonly url: string;
  /** The id of the latest commit on the page. */
  readonly commitId: string;
  /** The timestamp of the latest commit on the page, as written. */
  readonly commitTimeStamp: string;
  /** {@link commitTimeStamp} as exact ticks. */
  readonly commitTicks: Ticks;
  /** The number of leaves on the page. */
  readonly count: number;
}

/** The catalog index: the list of pages. Entries are in document order, which is not defined. */
export interface CatalogIndex {
  /** The id of the latest commit. */
  readonly commitId: string;
  /** The timestamp of the latest commit, as written. */
  readonly commitTimeStamp: string;
  /** {@link commitTimeStamp} as exact ticks. */
  readonly commitTicks: Ticks;
  /** The number of pages, when the index says. */
  readonly count?: number;
  /** One entry per page. */
  readonly items: CatalogIndexEntry[];
}

/** One leaf as listed on a catalog page. */
export interface PageItem {
  /** The leaf URL (its `@id`): absolute, http or https. */
  readonly url: string;
  /** The leaf type, from `@type`. */
  readonly type: LeafType;
  /** The id of the commit that added the leaf. */
  readonly commitId: string;
  /** The commit timestamp, as written. */
  readonly commitTimeStamp: string;
  /** {@link commitTimeStamp} as exact ticks. */
  readonly commitTicks: Ticks;
  /** The package id (`nuget:id`), as written. */
  readonly id: string;
  /** The package version (`nuget:version`), as written. */
  readonly version: string;
  /**
   * Set when the item is past the bounds no store can go beyond (an id over 100 characters, a
   * version over 64, keys over 1,024 bytes): the error, naming the page and the item, that the
   * pipeline raises for this leaf alone, as for a bad leaf. The rest of the page stays valid.
   */
  readonly problem?: InvalidDocumentError;
}

/** A catalog page. Items are in document order, which is not defined. */
export interface CatalogPage {
  /** The id of the latest commit on the page. */
  readonly commitId: string;
  /** The timestamp of the latest commit on the page, as written. */
  readonly commitTimeStamp: string;
  /** {@link commitTimeStamp} as exact ticks. */
  readonly commitTicks: Ticks;
  /** The number of leaves, when the page says. */
  readonly count?: number;
  /** The index URL, when the page says. */
  readonly parent?: string;
  /** One item per leaf. */
  readonly items: PageItem[];
}

/** A validated catalog leaf. */
export interface Leaf {
  /** `@type` as an array (a single string becomes an array of one). */
  readonly types: string[];
  /** The one leaf type among {@link types}. */
  readonly type: LeafType;
  /** The package id, as the leaf writes it. */
  readonly id: string;
  /** The package version, as the leaf writes it. */
  readonly version: string;
  /** `catalog:commitId`. */
  readonly commitId: string;
  /** `catalog:commitTimeStamp`, as written. */
  readonly commitTimeStamp: string;
  /** `catalog:commitTimeStamp` as exact ticks. */
  readonly commitTicks: Ticks;
  /** The whole document, every property kept, known or not. */
  readonly document: Record<string, unknown>;
}

// ---------------------------------------------------------------------------------------------
// Bodies, JSON and messages
// ---------------------------------------------------------------------------------------------

// `ignoreBOM: false` (the default) makes the decoder consume one leading BOM, which nuget.org's
// writer puts on some leaves. `fatal` rejects invalid UTF-8 instead of silently replacing it.
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Longest quoted value or message part put into an error message: hostile input can be huge. */
const MAX_SHOWN = 200;
/** Most problems listed in one error message. */
const MAX_LISTED = 3;

function clip(text: string): string {
  return text.length <= MAX_SHOWN ? text : `${text.slice(0, MAX_SHOWN)}… (${text.length} characters)`;
}

function quote(value: string): string {
  return clip(JSON.stringify(value));
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

function decode(body: DocumentBody, url: string): string {
  if (typeof body === 'string') return body.charCodeAt(0) === 0xfeff ? body.slice(1) : body;
  try {
    return utf8.decode(body);
  } catch (error) {
    throw new InvalidDocumentError(url, 'not valid UTF-8', { cause: error });
  }
}

/**
 * Decodes a body (stripping one leading UTF-8 BOM) and parses it as JSON.
 *
 * @throws {@link InvalidDocumentError} `${url}: not valid JSON: …` (or `not valid UTF-8`).
 */
export function parseJson(body: DocumentBody, url: string): unknown {
  const text = decode(body, url);
  if (text.trim() === '') throw new InvalidDocumentError(url, 'not valid JSON: the body is empty');
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new InvalidDocumentError(url, `not valid JSON: ${clip(message)}`, { cause: error });
  }
}

function requireObject(json: unknown, url: string, kind: DocumentKind): Record<string, unknown> {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw new InvalidDocumentError(url, `expected the ${kind} to be a JSON object, got ${typeName(json)}`);
  }
  return json as Record<string, unknown>;
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

/** `items[4].commitTimeStamp`, `items[0]["@id"]`: JavaScript accessor syntax, exact for any key. */
function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else if (typeof key === 'string' && IDENTIFIER.test(key)) out += out === '' ? key : `.${key}`;
    else out += `[${JSON.stringify(String(key))}]`;
  }
  return out === '' ? '(document)' : out;
}

/**
 * Collects the problems of one document, from zod and from the cross-item checks alike. Only the
 * first few are kept for the message, but all are counted, so a document with a million bad items
 * still costs one linear pass and gives a short message.
 */
class Problems {
  private readonly shown: string[] = [];
  private total = 0;
  /** The first underlying error (a `ZodError`), kept as the thrown error's `cause`. */
  cause: unknown;

  add(path: readonly PropertyKey[], message: string): void {
    this.total += 1;
    if (this.shown.length < MAX_LISTED) this.shown.push(`${formatPath(path)}: ${clip(message)}`);
  }

  throwIfAny(url: string): void {
    if (this.total === 0) return;
    const more = this.total - this.shown.length;
    const tail = more > 0 ? `; and ${more} more problem${more === 1 ? '' : 's'}` : '';
    const options = this.cause === undefined ? undefined : { cause: this.cause };
    throw new InvalidDocumentError(url, this.shown.join('; ') + tail, options);
  }
}

// Applied per parse (not globally) so other users of zod in the process keep their own messages;
// schema-level messages below still take precedence.
const errorMap: z.core.$ZodErrorMap = (issue) => {
  if (issue.code === 'invalid_type') {
    return issue.input === undefined
      ? `missing (expected ${issue.expected})`
      : `expected ${issue.expected}, got ${typeName(issue.input)}`;
  }
  return undefined;
};

/** Runs a schema, recording its issues in `problems`; returns the data only when there were none. */
function check<T extends z.ZodType>(schema: T, json: unknown, problems: Problems): z.output<T> | undefined {
  const result = schema.safeParse(json, { error: errorMap });
  if (result.success) return result.data;
  problems.cause ??= result.error;
  for (const issue of result.error.issues) problems.add(issue.path, issue.message);
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Field schemas
// ---------------------------------------------------------------------------------------------

const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):/;
const HTTP_PREFIX = /^https?:\/\//i;
// The WHATWG parser silently strips some whitespace and control characters; a catalog URL never
// has any, so their presence means the document is broken or hostile.
const SPACE_OR_CONTROL = /[\s\u0000-\u001f\u007f]/;

/** Why `text` is not an absolute http(s) URL, or undefined when it is one. */
function urlProblem(text: string): string | undefined {
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

const httpUrl = z.string().check((ctx) => {
  const problem = urlProblem(ctx.value);
  if (problem !== undefined) ctx.issues.push({ code: 'custom', message: problem, input: ctx.value });
});

const nonEmptyString = z.string().min(1, { error: 'must not be empty' });

const nonNegativeInteger = z
  .number()
  .int({ error: (issue) => `expected an integer, got ${String(issue.input)}` })
  .min(0, { error: (issue) => `must not be negative, got ${String(issue.input)}` });

/** A timestamp as written plus its exact ticks. */
interface Stamp {
  readonly text: string;
  readonly ticks: Ticks;
}

const timestamp = z.string().transform((text, ctx): Stamp => {
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
const stringsError = (issue: { readonly input?: unknown }): string =>
  issue.input === undefined ? `missing (expected ${STRINGS})` : `expected ${STRINGS}`;

const typeList = z.union([z.string(), z.array(z.string())], { error: stringsError });

// A Map, not an object literal, so `__proto__` or `constructor` in hostile input finds nothing.
const LEAF_TYPE_NAMES: ReadonlyMap<string, LeafType> = new Map<string, LeafType>([
  ['PackageDetails', LeafType.details],
  ['nuget:PackageDetails', LeafType.details],
  ['PackageDelete', LeafType.delete],
  ['nuget:PackageDelete', LeafType.delete],
]);

/** The one leaf type among `types`, or a message saying why there is not exactly one. */
function resolveLeafType(types: readonly string[]): LeafType | { readonly problem: string } {
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
const leafTypeField = typeList.transform((value, ctx) => {
  const types = typeof value === 'string' ? [value] : value;
  const type = resolveLeafType(types);
  if (typeof type === 'object') {
    ctx.issues.push({ code: 'custom', message: type.problem, input: value });
    return z.NEVER;
  }
  return { types, type };
});

// ---------------------------------------------------------------------------------------------
// Service index
// ---------------------------------------------------------------------------------------------

const serviceIndexSchema = z.object({
  version: z.string().optional(),
  resources: z.array(z.object({ '@id': httpUrl, '@type': typeList })),
});

function validateServiceIndex(json: unknown, url: string): ServiceIndex {
  const document = requireObject(json, url, DocumentKind.serviceIndex);
  const problems = new Problems();
  const data = check(serviceIndexSchema, document, problems);
  problems.throwIfAny(url);
  return data!;
}

/**
 * Parses and validates a service index.
 *
 * @param body - the response body; one leading UTF-8 BOM is ignored.
 * @param url - where the body came from, for error messages.
 * @throws {@link InvalidDocumentError} when the body is not a valid service index.
 */
export function parseServiceIndex(body: DocumentBody, url: string): ServiceIndex {
  return validateServiceIndex(parseJson(body, url), url);
}

/** The `@type` of the catalog resource in a service index. */
export const CATALOG_RESOURCE_TYPE = 'Catalog/3.0.0';

/**
 * The catalog index URL named by a service index: the `@id` of the first resource whose `@type` is
 * (or includes) `Catalog/3.0.0`.
 *
 * @param url - the service index URL, for the error message.
 * @throws {@link InvalidDocumentError} when the source has no catalog (not every source does).
 */
export function findCatalogUrl(serviceIndex: ServiceIndex, url: string): string {
  for (const resource of serviceIndex.resources) {
    const types = resource['@type'];
    if (types === CATALOG_RESOURCE_TYPE || (Array.isArray(types) && types.includes(CATALOG_RESOURCE_TYPE))) {
      return resource['@id'];
    }
  }
  const seen = [...new Set(serviceIndex.resources.flatMap((resource) => resource['@type']))];
  const listed = seen.slice(0, 5).map((type) => quote(type)).join(', ');
  const more = seen.length > 5 ? ` and ${seen.length - 5} more` : '';
  const has = seen.length === 0 ? 'it has no resources' : `it has ${listed}${more}`;
  throw new InvalidDocumentError(url, `the service index has no ${CATALOG_RESOURCE_TYPE} resource (${has})`);
}

// ---------------------------------------------------------------------------------------------
// Source kind
// ---------------------------------------------------------------------------------------------

/**
 * Tells a service index from a catalog index by content: a `resources` array or an `items` array.
 *
 * @param json - the parsed document (see {@link parseJson}).
 * @param url - where it came from, for the error message.
 * @throws {@link InvalidDocumentError} when it is neither (or, ambiguously, both).
 */
export function detectSourceKind(json: unknown, url = '(source document)'): SourceKind {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw new InvalidDocumentError(
      url,
      `expected a service index or a catalog index (a JSON object), got ${typeName(json)}`,
    );
  }
  const document = json as Record<string, unknown>;
  const hasResources = Array.isArray(document['resources']);
  const hasItems = Array.isArray(document['items']);
  if (hasResources && !hasItems) return SourceKind.serviceIndex;
  if (hasItems && !hasResources) return SourceKind.catalogIndex;
  throw new InvalidDocumentError(
    url,
    hasResources
      ? 'has both a resources array and an items array: cannot tell a service index from a catalog index'
      : 'neither a service index (no resources array) nor a catalog index (no items array)',
  );
}

/** A source document, parsed as whichever kind its content shows. */
export type SourceDocument =
  | { readonly kind: typeof SourceKind.serviceIndex; readonly serviceIndex: ServiceIndex }
  | { readonly kind: typeof SourceKind.catalogIndex; readonly catalogIndex: CatalogIndex };

/**
 * Parses the document at the configured source URL, which may be a service index or a catalog
 * index, parsing the body only once.
 *
 * @throws {@link InvalidDocumentError} when it is neither, or is not a valid one of its kind.
 */
export function parseSource(body: DocumentBody, url: string): SourceDocument {
  const json = parseJson(body, url);
  return detectSourceKind(json, url) === SourceKind.serviceIndex
    ? { kind: SourceKind.serviceIndex, serviceIndex: validateServiceIndex(json, url) }
    : { kind: SourceKind.catalogIndex, catalogIndex: validateCatalogIndex(json, url) };
}

// ---------------------------------------------------------------------------------------------
// Catalog index
// ---------------------------------------------------------------------------------------------

const indexEntrySchema = z.object({
  '@id': httpUrl,
  commitId: nonEmptyString,
  commitTimeStamp: timestamp,
  count: nonNegativeInteger,
  items: z
    .undefined({ error: 'a page entry in the catalog index must not embed items (pages never embed leaves)' })
    .optional(),
});

const catalogIndexSchema = z.object({
  commitId: nonEmptyString,
  commitTimeStamp: timestamp,
  count: nonNegativeInteger.optional(),
  items: z.array(indexEntrySchema),
});

function validateCatalogIndex(json: unknown, url: string): CatalogIndex {
  const document = requireObject(json, url, DocumentKind.catalogIndex);
  const problems = new Problems();
  const data = check(catalogIndexSchema, document, problems);
  problems.throwIfAny(url);
  const index = data!;

  const items: CatalogIndexEntry[] = new Array(index.items.length);
  const seen = new Map<string, number>();
  for (let i = 0; i < index.items.length; i++) {
    const entry = index.items[i]!;
    const pageUrl = entry['@id'];
    const first = seen.get(pageUrl);
    if (first !== undefined) problems.add(['items', i, '@id'], `duplicate of items[${first}]: ${quote(pageUrl)}`);
    else seen.set(pageUrl, i);
    if (entry.commitTimeStamp.ticks > index.commitTimeStamp.ticks) {
      problems.add(
        ['items', i, 'commitTimeStamp'],
        `${quote(entry.commitTimeStamp.text)} is after the index's commitTimeStamp ` +
          `${quote(index.commitTimeStamp.text)}: the index is inconsistent`,
      );
    }
    items[i] = {
      url: pageUrl,
      commitId: entry.commitId,
      commitTimeStamp: entry.commitTimeStamp.text,
      commitTicks: entry.commitTimeStamp.ticks,
      count: entry.count,
    };
  }
  problems.throwIfAny(url);
  return {
    commitId: index.commitId,
    commitTimeStamp: index.commitTimeStamp.text,
    commitTicks: index.commitTimeStamp.ticks,
    ...(index.count === undefined ? {} : { count: index.count }),
    items,
  };
}

/**
 * Parses and validates a catalog index: its shape, and that no page is listed twice or is newer
 * than the index itself.
 *
 * @param body - the response body; one leading UTF-8 BOM is ignored.
 * @param url - where the body came from, for error messages.
 * @throws {@link InvalidDocumentError} when the body is not a valid catalog index.
 */
export function parseCatalogIndex(body: DocumentBody, url: string): CatalogIndex {
  return validateCatalogIndex(parseJson(body, url), url);
}

// ---------------------------------------------------------------------------------------------
// Catalog page
// ---------------------------------------------------------------------------------------------

const pageItemSchema = z.object({
  '@id': httpUrl,
  '@type': leafTypeField,
  commitId: nonEmptyString,
  commitTimeStamp: timestamp,
  'nuget:id': nonEmptyString,
  'nuget:version': nonEmptyString,
});

const catalogPageSchema = z.object({
  commitId: nonEmptyString,
  commitTimeStamp: timestamp,
  count: nonNegativeInteger.optional(),
  parent: httpUrl.optional(),
  items: z.array(pageItemSchema),
});

/** `package "id" "version" (leaf "url")`, each clipped: how an item is named in a per-item error. */
export function describeItem(item: Pick<PageItem, 'id' | 'version' | 'url'>): string {
  return `package ${quote(item.id)} ${quote(item.version)} (leaf ${quote(item.url)})`;
}

/**
 * Parses and validates a catalog page: its shape, and the protocol's guarantees within it: no item
 * newer than the page, one commit id per timestamp and one timestamp per commit id, at most one
 * leaf per package id + version in a commit, and no leaf URL twice. An item whose id or version no
 * store can hold does not fail the page: it gets a {@link PageItem.problem}.
 *
 * @param body - the response body; one leading UTF-8 BOM is ignored.
 * @param url - where the body came from, for error messages.
 * @throws {@link InvalidDocumentError} when the body is not a valid catalog page.
 */
export function parseCatalogPage(body: DocumentBody, url: string): CatalogPage {
  const document = requireObject(parseJson(body, url), url, DocumentKind.page);
  const problems = new Problems();
  const data = check(catalogPageSchema, document, problems);
  problems.throwIfAny(url);
  const page = data!;

  const items: PageItem[] = new Array(page.items.length);
  const byUrl = new Map<string, number>();
  const commitAt = new Map<Ticks, number>();
  const timeOf = new Map<string, number>();
  const identities = new Map<string, number>();
  for (let i = 0; i < page.items.length; i++) {
    const raw = page.items[i]!;
    const item: PageItem = {
      url: raw['@id'],
      type: raw['@type'].type,
      commitId: raw.commitId,
      commitTimeStamp: raw.commitTimeStamp.text,
      commitTicks: raw.commitTimeStamp.ticks,
      id: raw['nuget:id'],
      version: raw['nuget:version'],
    };
    const unstorable = identityKeyProblem(item.id, item.version);
    items[i] =
      unstorable === undefined
        ? item
        : { ...item, problem: new InvalidDocumentError(url, `items[${i}]: ${describeItem(item)} cannot be stored: ${unstorable}`) };

    const sameUrl = byUrl.get(item.url);
    if (sameUrl !== undefined) problems.add(['items', i, '@id'], `duplicate of items[${sameUrl}]: ${quote(item.url)}`);
    else byUrl.set(item.url, i);

    if (item.commitTicks > page.commitTimeStamp.ticks) {
      problems.add(
        ['items', i, 'commitTimeStamp'],
        `${quote(item.commitTimeStamp)} is after the page's commitTimeStamp ${quote(page.commitTimeStamp.text)}`,
      );
    }

    const atSameTime = commitAt.get(item.commitTicks);
    if (atSameTime === undefined) commitAt.set(item.commitTicks, i);
    else if (items[atSameTime]!.commitId !== item.commitId) {
      problems.add(
        ['items', i, 'commitId'],
        `${quote(item.commitId)} differs from items[${atSameTime}].commitId ${quote(items[atSameTime]!.commitId)} ` +
          `at the same commitTimeStamp ${quote(item.commitTimeStamp)} (one commit per timestamp)`,
      );
    }

    const sameCommit = timeOf.get(item.commitId);
    if (sameCommit === undefined) timeOf.set(item.commitId, i);
    else if (items[sameCommit]!.commitTicks !== item.commitTicks) {
      problems.add(
        ['items', i, 'commitTimeStamp'],
        `${quote(item.commitTimeStamp)} differs from items[${sameCommit}].commitTimeStamp ` +
          `${quote(items[sameCommit]!.commitTimeStamp)} in the same commit ${quote(item.commitId)}`,
      );
    }

    const identity = `${item.commitId}\n${item.id.toLowerCase()}\n${comparableVersion(item.version)}`;
    const twin = identities.get(identity);
    if (twin === undefined) identities.set(identity, i);
    else {
      problems.add(
        ['items', i],
        `${clip(item.id)} ${clip(item.version)} appears twice in commit ${quote(item.commitId)}: ` +
          `${quote(items[twin]!.url)} (items[${twin}]) and ${quote(item.url)}`,
      );
    }
  }
  problems.throwIfAny(url);
  return {
    commitId: page.commitId,
    commitTimeStamp: page.commitTimeStamp.text,
    commitTicks: page.commitTimeStamp.ticks,
    ...(page.count === undefined ? {} : { count: page.count }),
    ...(page.parent === undefined ? {} : { parent: page.parent }),
    items,
  };
}

// ---------------------------------------------------------------------------------------------
// Leaf
// ---------------------------------------------------------------------------------------------

// Standard base64 with padding, as nuget.org writes packageHash.
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Properties every leaf has. Loose: a leaf carries more than is documented, and keeps it all. */
const leafSchema = z.looseObject({
  '@type': leafTypeField,
  'catalog:commitId': nonEmptyString,
  'catalog:commitTimeStamp': timestamp,
  id: nonEmptyString,
  // nuget.org writes 1900-01-01 for unlisted packages: any valid timestamp is fine.
  published: timestamp,
  version: nonEmptyString,
});

// Optional properties are checked for their type only, and `null` counts as absent: a leaf that
// nuget.org's writer produced must not stop the run over a detail no consumer here relies on.
const optionalString = z.string().nullish();
const optionalBoolean = z.boolean().nullish();

/** Properties of a PackageDetails leaf: the package's identity on disk, then documented optionals. */
const detailsSchema = z.looseObject({
  packageHash: nonEmptyString.regex(BASE64, { error: 'expected standard base64' }),
  packageHashAlgorithm: nonEmptyString,
  packageSize: nonNegativeInteger,
  authors: optionalString,
  created: optionalString,
  description: optionalString,
  iconUrl: optionalString,
  language: optionalString,
  licenseUrl: optionalString,
  minClientVersion: optionalString,
  projectUrl: optionalString,
  releaseNotes: optionalString,
  summary: optionalString,
  title: optionalString,
  verbatimVersion: optionalString,
  listed: optionalBoolean,
  isPrerelease: optionalBoolean,
  requireLicenseAcceptance: optionalBoolean,
  tags: z.union([z.string(), z.array(z.string())], { error: stringsError }).nullish(),
  vulnerabilities: z
    .array(
      z.looseObject({
        advisoryUrl: z.string(),
        // "0" low … "3" critical; the protocol says any other value means low, so any is accepted.
        severity: z.union([z.string(), z.number()], { error: 'expected a string' }),
      }),
    )
    .nullish(),
  deprecation: z
    .looseObject({
      reasons: z.array(z.string()),
      message: optionalString,
      alternatePackage: z.looseObject({ id: z.string(), range: optionalString }).nullish(),
    })
    .nullish(),
  packageTypes: z.array(z.looseObject({ name: z.string(), version: optionalString })).nullish(),
  // Only the nesting is checked: nuget.org's writer emits dependencies with empty, missing,
  // whitespace and invalid ids and ranges (see the NuGetGallery fixtures), and those leaves are real.
  dependencyGroups: z
    .array(z.looseObject({ targetFramework: optionalString, dependencies: z.array(z.looseObject({})).nullish() }))
    .nullish(),
});

function differs(problems: Problems, field: string, leaf: string, item: string): void {
  problems.add([field], `the leaf has ${quote(leaf)} but the page item has ${quote(item)}`);
}

/**
 * Parses and validates a catalog leaf, and checks it against the page item that pointed at it: same
 * type, same commit (id, and timestamp to the tick), same package id (ignoring case) and the same
 * version once normalized (a delete may carry a non-normalized one such as `1.0` for `1.0.0`).
 *
 * @param body - the response body; one leading UTF-8 BOM is ignored.
 * @param url - where the body came from, for error messages.
 * @param expected - the page item that listed this leaf.
 * @throws {@link InvalidDocumentError} when the body is not a valid leaf or does not match `expected`.
 */
export function parseLeaf(body: DocumentBody, url: string, expected: PageItem): Leaf {
  const document = requireObject(parseJson(body, url), url, DocumentKind.leaf);
  const problems = new Problems();
  const data = check(leafSchema, document, problems);
  // The details properties are checked even when the common ones failed, so one message lists
  // every problem; only a leaf whose @type says PackageDetails has them.
  const rawType = document['@type'];
  const types = typeof rawType === 'string' ? [rawType] : Array.isArray(rawType) ? rawType : [];
  if (resolveLeafType(types.filter((type): type is string => typeof type === 'string')) === LeafType.details) {
    check(detailsSchema, document, problems);
  }
  problems.throwIfAny(url);
  const leaf = data!;

  const type = leaf['@type'].type;
  if (type !== expected.type) differs(problems, '@type', type, expected.type);
  const commitId = leaf['catalog:commitId'];
  if (commitId !== expected.commitId) differs(problems, 'catalog:commitId', commitId, expected.commitId);
  const commit = leaf['catalog:commitTimeStamp'];
  if (commit.ticks !== expected.commitTicks) {
    differs(problems, 'catalog:commitTimeStamp', commit.text, expected.commitTimeStamp);
  }
  if (leaf.id.toLowerCase() !== expected.id.toLowerCase()) differs(problems, 'id', leaf.id, expected.id);
  if (comparableVersion(leaf.version) !== comparableVersion(expected.version)) {
    differs(problems, 'version', leaf.version, expected.version);
  }
  problems.throwIfAny(url);

  return {
    types: leaf['@type'].types,
    type,
    id: leaf.id,
    version: leaf.version,
    commitId,
    commitTimeStamp: commit.text,
    commitTicks: commit.ticks,
    document,
  };
}
