/**
 * The catalog leaf: its shape (the properties every leaf has, and a PackageDetails leaf's own) and
 * that it matches the page item that pointed at it. Hot path: one call per leaf.
 */
import * as z from 'zod';
import { DocumentKind } from './errors.js';
import { LeafType, type DocumentBody, type Leaf, type PageItem } from './documents.js';
import { resolveLeafType, stringsError } from './field-checks.js';
import { fieldSchemas } from './field-schemas.js';
import { fastLeafFields, type LeafFields } from './fast-path.js';
import { Problems, check, parseJson, requireObject } from './json.js';
import { leafFrom } from './leaf-match.js';

// Standard base64 with padding, as nuget.org writes packageHash.
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** The leaf's schemas, built on first use (see field-schemas.ts). */
function build() {
  const { leafTypeField, nonEmptyString, nonNegativeInteger, timestamp } = fieldSchemas();
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
  return { leafSchema, detailsSchema };
}

let built: ReturnType<typeof build> | undefined;
const schemas = (): ReturnType<typeof build> => (built ??= build());

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
  // The common case, a valid leaf, skips zod; anything the fast path is not sure of goes through zod, which
  // decides and words the problems.
  const fields = fastLeafFields(document) ?? zodLeafFields(document, url);
  return leafFrom(document, fields, url, expected);
}

/**
 * The zod path: every problem of the document in one message (thrown), or its fields. Exported for the test that
 * holds the fast path to it (test/unit/fast-path.test.ts); {@link parseLeaf} is the way in.
 *
 * @throws {@link InvalidDocumentError} when the schemas reject the document.
 */
export function zodLeafFields(document: Record<string, unknown>, url: string): LeafFields {
  const problems = new Problems();
  const { leafSchema, detailsSchema } = schemas();
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
  const commit = leaf['catalog:commitTimeStamp'];
  return {
    types: leaf['@type'].types,
    type: leaf['@type'].type,
    commitId: leaf['catalog:commitId'],
    commitTimeStamp: commit.text,
    commitTicks: commit.ticks,
    id: leaf.id,
    version: leaf.version,
  };
}
