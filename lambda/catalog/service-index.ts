/**
 * The service index (where a source names its catalog) and the source document, which may be a
 * service index or a catalog index, told apart by content (source-kind.ts). The schema is built on first use.
 */
import * as z from 'zod';
import { DocumentKind } from './errors.js';
import { SourceKind, type DocumentBody, type ServiceIndex, type SourceDocument } from './documents.js';
import { fastServiceIndex } from './fast-path.js';
import { fieldSchemas } from './field-schemas.js';
import { validateCatalogIndex } from './index-schema.js';
import { Problems, check, parseJson, requireObject } from './json.js';
import { detectSourceKind } from './source-kind.js';

/** The service index's schema, built on first use (see field-schemas.ts). */
function build() {
  const { httpUrl, typeList } = fieldSchemas();
  return z.object({
    version: z.string().optional(),
    resources: z.array(z.object({ '@id': httpUrl, '@type': typeList })),
  });
}

let built: ReturnType<typeof build> | undefined;

/**
 * The zod path: every problem of the service index in one message (thrown), or the index. Exported for the test that
 * holds the fast path to it (test/unit/fast-path.test.ts) and for the client's reader (read-documents.ts);
 * {@link parseServiceIndex} is the way in.
 *
 * @throws {@link InvalidDocumentError} when the schema rejects the document.
 */
export function zodServiceIndex(document: Record<string, unknown>, url: string): ServiceIndex {
  const problems = new Problems();
  const data = check((built ??= build()), document, problems);
  problems.throwIfAny(url);
  return data as ServiceIndex;
}

function validateServiceIndex(json: unknown, url: string): ServiceIndex {
  const document = requireObject(json, url, DocumentKind.serviceIndex);
  return fastServiceIndex(document) ?? zodServiceIndex(document, url);
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
