/**
 * Hand-written checks that accept the documents the zod schemas of `leaf-schema.ts`, `page-schema.ts`,
 * `index-schema.ts` and `service-index.ts` accept, without zod's cost (a leaf's zod parse is most of `parseLeaf`'s
 * CPU, and loading zod a fifth of a command's start-up). They are one-sided: each says "certainly
 * valid, and here are the fields" or "not sure", never "invalid". A document they are not sure of goes through
 * the zod schemas, which decide and word the error, so every accepted document and every error message is the
 * same as with zod alone; test/unit/fast-path.test.ts checks the two agree on generated and mutated documents.
 * This file loads no zod.
 */
import {
  LeafType,
  type CatalogIndex,
  type CatalogIndexEntry,
  type PageItem,
  type ServiceIndex,
  type ServiceIndexResource,
} from './documents.js';
import { resolveLeafType, urlProblem } from './field-checks.js';
import { isTimestamp, parseTimestamp, type Ticks } from '../contract/time.js';

// Kept identical to the regex of detailsSchema (leaf-schema.ts).
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

type Json = Record<string, unknown>;

/** What zod's object schemas take as an object. */
function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isNonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0;
}

/** `z.string().nullish()`. */
function isOptionalString(value: unknown): boolean {
  return value === undefined || value === null || typeof value === 'string';
}

/** `z.boolean().nullish()`. */
function isOptionalBoolean(value: unknown): boolean {
  return value === undefined || value === null || typeof value === 'boolean';
}

function isStringArray(value: unknown): value is string[] {
  if (!Array.isArray(value)) return false;
  for (const item of value) if (typeof item !== 'string') return false;
  return true;
}

/** Every element an object passing `each`. */
function isObjectArray(value: unknown, each: (item: Json) => boolean): boolean {
  if (!Array.isArray(value)) return false;
  for (const item of value) if (!isObject(item) || !each(item)) return false;
  return true;
}

/** `nonNegativeInteger` (a safe integer, at least 0). */
function isCount(value: unknown): boolean {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

/**
 * The ticks of `text`, or undefined when it is not a timestamp. `memo` remembers the last text parsed: the
 * leaves and page items of one commit share their timestamp text.
 */
function ticksOf(text: unknown, memo: Memo): Ticks | undefined {
  if (typeof text !== 'string') return undefined;
  if (text === memo.text) return memo.ticks;
  try {
    const ticks = parseTimestamp(text);
    memo.text = text;
    memo.ticks = ticks;
    return ticks;
  } catch {
    return undefined;
  }
}

interface Memo {
  text: string | undefined;
  ticks: Ticks;
}

const leafMemo: Memo = { text: undefined, ticks: 0n };

/** `@type` as zod's `leafTypeField` gives it: every type name (a copy) and the one leaf type. */
function typeField(value: unknown): { readonly types: string[]; readonly type: LeafType } | undefined {
  let types: string[];
  if (typeof value === 'string') types = [value];
  else if (isStringArray(value)) types = value.slice();
  else return undefined;
  const type = resolveLeafType(types);
  return typeof type === 'string' ? { types, type } : undefined;
}

/** The fields of a leaf that `parseLeaf` reads, as its zod schemas give them: a page item's, but its `@type` list. */
export interface LeafFields extends Omit<PageItemFields, 'url'> {
  readonly types: string[];
}

/** The properties of a PackageDetails leaf, as `detailsSchema` checks them. */
function detailsValid(leaf: Json): boolean {
  const hash = leaf.packageHash;
  if (!isNonEmptyString(hash) || !BASE64.test(hash)) return false;
  if (!isNonEmptyString(leaf.packageHashAlgorithm) || !isCount(leaf.packageSize)) return false;
  if (
    !isOptionalString(leaf.authors) ||
    !isOptionalString(leaf.created) ||
    !isOptionalString(leaf.description) ||
    !isOptionalString(leaf.iconUrl) ||
    !isOptionalString(leaf.language) ||
    !isOptionalString(leaf.licenseUrl) ||
    !isOptionalString(leaf.minClientVersion) ||
    !isOptionalString(leaf.projectUrl) ||
    !isOptionalString(leaf.releaseNotes) ||
    !isOptionalString(leaf.summary) ||
    !isOptionalString(leaf.title) ||
    !isOptionalString(leaf.verbatimVersion) ||
    !isOptionalBoolean(leaf.listed) ||
    !isOptionalBoolean(leaf.isPrerelease) ||
    !isOptionalBoolean(leaf.requireLicenseAcceptance)
  ) {
    return false;
  }
  const tags = leaf.tags;
  if (tags != null && typeof tags !== 'string' && !isStringArray(tags)) return false;
  const vulnerabilities = leaf.vulnerabilities;
  if (
    vulnerabilities != null &&
    !isObjectArray(
      vulnerabilities,
      (v) =>
        typeof v.advisoryUrl === 'string' &&
        (typeof v.severity === 'string' || (typeof v.severity === 'number' && Number.isFinite(v.severity))),
    )
  ) {
    return false;
  }
  const deprecation = leaf.deprecation;
  if (deprecation != null) {
    if (!isObject(deprecation) || !isStringArray(deprecation.reasons) || !isOptionalString(deprecation.message))
      return false;
    const alternate = deprecation.alternatePackage;
    if (
      alternate != null &&
      (!isObject(alternate) || typeof alternate.id !== 'string' || !isOptionalString(alternate.range))
    ) {
      return false;
    }
  }
  const packageTypes = leaf.packageTypes;
  if (
    packageTypes != null &&
    !isObjectArray(packageTypes, (t) => typeof t.name === 'string' && isOptionalString(t.version))
  ) {
    return false;
  }
  const groups = leaf.dependencyGroups;
  if (
    groups != null &&
    !isObjectArray(
      groups,
      (g) =>
        isOptionalString(g.targetFramework) && (g.dependencies == null || isObjectArray(g.dependencies, () => true)),
    )
  ) {
    return false;
  }
  return true;
}

/**
 * A leaf's fields when `leafSchema` (and `detailsSchema`, for a PackageDetails leaf) certainly accept the
 * document; undefined when zod must decide.
 */
export function fastLeafFields(leaf: Json): LeafFields | undefined {
  const typed = typeField(leaf['@type']);
  const commitId = leaf['catalog:commitId'];
  const commitTimeStamp = leaf['catalog:commitTimeStamp'];
  const id = leaf.id;
  const version = leaf.version;
  if (typed === undefined || !isNonEmptyString(commitId) || !isNonEmptyString(id) || !isNonEmptyString(version))
    return undefined;
  const commitTicks = ticksOf(commitTimeStamp, leafMemo);
  if (commitTicks === undefined) return undefined;
  // `published` differs from leaf to leaf: checked without touching the commit's memo.
  if (typeof leaf.published !== 'string' || !isTimestamp(leaf.published)) return undefined;
  if (typed.type === LeafType.details && !detailsValid(leaf)) return undefined;
  return {
    types: typed.types,
    type: typed.type,
    commitId,
    commitTimeStamp: commitTimeStamp as string,
    commitTicks,
    id,
    version,
  };
}

/** One page item's fields, as `pageItemSchema` gives them (the bounds check, `problem`, comes after). */
export type PageItemFields = Omit<PageItem, 'problem'>;

/** A page's fields, as `catalogPageSchema` gives them. */
export interface PageFields {
  readonly commitId: string;
  readonly commitTimeStamp: string;
  readonly commitTicks: Ticks;
  readonly count?: number;
  readonly parent?: string;
  readonly items: PageItemFields[];
}

/** A page's fields when `catalogPageSchema` certainly accepts the document; undefined when zod must decide. */
export function fastPageFields(page: Json): PageFields | undefined {
  const memo: Memo = { text: undefined, ticks: 0n };
  const { commitId, commitTimeStamp, count, parent, items: rawItems } = page;
  if (!isNonEmptyString(commitId) || !Array.isArray(rawItems)) return undefined;
  const commitTicks = ticksOf(commitTimeStamp, memo);
  if (commitTicks === undefined) return undefined;
  if (count !== undefined && !isCount(count)) return undefined;
  if (parent !== undefined && (typeof parent !== 'string' || urlProblem(parent) !== undefined)) return undefined;
  const items: PageItemFields[] = new Array(rawItems.length);
  for (let i = 0; i < rawItems.length; i++) {
    const raw: unknown = rawItems[i];
    if (!isObject(raw)) return undefined;
    const url = raw['@id'];
    const typed = typeField(raw['@type']);
    const itemCommitId = raw.commitId;
    const id = raw['nuget:id'];
    const version = raw['nuget:version'];
    if (typed === undefined || !isNonEmptyString(itemCommitId) || !isNonEmptyString(id) || !isNonEmptyString(version))
      return undefined;
    const text = raw.commitTimeStamp;
    const ticks = ticksOf(text, memo);
    if (ticks === undefined) return undefined;
    if (typeof url !== 'string' || urlProblem(url) !== undefined) return undefined;
    items[i] = {
      url,
      type: typed.type,
      commitId: itemCommitId,
      commitTimeStamp: text as string,
      commitTicks: ticks,
      id,
      version,
    };
  }
  return {
    commitId,
    commitTimeStamp: commitTimeStamp as string,
    commitTicks,
    ...(count === undefined ? {} : { count: count as number }),
    ...(parent === undefined ? {} : { parent: parent as string }),
    items,
  };
}

/** A catalog index's fields when `catalogIndexSchema` (index-schema.ts) certainly accepts the document; undefined when zod must decide. */
export function fastIndexFields(index: Json): CatalogIndex | undefined {
  const memo: Memo = { text: undefined, ticks: 0n };
  const { commitId, commitTimeStamp, count, items: rawItems } = index;
  if (!isNonEmptyString(commitId) || !Array.isArray(rawItems)) return undefined;
  const commitTicks = ticksOf(commitTimeStamp, memo);
  if (commitTicks === undefined) return undefined;
  if (count !== undefined && !isCount(count)) return undefined;
  const items: CatalogIndexEntry[] = new Array(rawItems.length);
  for (let i = 0; i < rawItems.length; i++) {
    const raw: unknown = rawItems[i];
    if (!isObject(raw)) return undefined;
    const url = raw['@id'];
    const entryCommitId = raw.commitId;
    const entryCount = raw.count;
    const text = raw.commitTimeStamp;
    // A page entry never embeds its items: zod says so in its own words.
    if (!isNonEmptyString(entryCommitId) || !isCount(entryCount) || raw.items !== undefined) return undefined;
    const ticks = ticksOf(text, memo);
    if (ticks === undefined) return undefined;
    if (typeof url !== 'string' || urlProblem(url) !== undefined) return undefined;
    items[i] = {
      url,
      commitId: entryCommitId,
      commitTimeStamp: text as string,
      commitTicks: ticks,
      count: entryCount as number,
    };
  }
  return {
    commitId,
    commitTimeStamp: commitTimeStamp as string,
    commitTicks,
    ...(count === undefined ? {} : { count: count as number }),
    items,
  };
}

/** A service index as `serviceIndexSchema` (service-index.ts) gives it when it certainly accepts the document; undefined when zod must decide. */
export function fastServiceIndex(document: Json): ServiceIndex | undefined {
  const { version, resources: rawResources } = document;
  if ((version !== undefined && typeof version !== 'string') || !Array.isArray(rawResources)) return undefined;
  const resources: ServiceIndexResource[] = new Array(rawResources.length);
  for (let i = 0; i < rawResources.length; i++) {
    const raw: unknown = rawResources[i];
    if (!isObject(raw)) return undefined;
    const url = raw['@id'];
    const type = raw['@type'];
    if (typeof url !== 'string' || urlProblem(url) !== undefined) return undefined;
    // zod's object schema keeps only the properties it names, and its array schema gives a copy.
    if (typeof type === 'string') resources[i] = { '@id': url, '@type': type };
    else if (isStringArray(type)) resources[i] = { '@id': url, '@type': type.slice() };
    else return undefined;
  }
  return { ...(version === undefined ? {} : { version }), resources };
}
