/**
 * Where a source names its catalog, and what kind of document a source is (a service index or a catalog index, told
 * apart by content), with no zod: the catalog client needs these on every run, zod only for a document its fast
 * path is not sure of.
 */
import { InvalidDocumentError } from './errors.js';
import { SourceKind, type ServiceIndex } from './documents.js';
import { quote, typeName } from './json.js';

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
  const listed = seen
    .slice(0, 5)
    .map((type) => quote(type))
    .join(', ');
  const more = seen.length > 5 ? ` and ${seen.length - 5} more` : '';
  const has = seen.length === 0 ? 'it has no resources' : `it has ${listed}${more}`;
  throw new InvalidDocumentError(url, `the service index has no ${CATALOG_RESOURCE_TYPE} resource (${has})`);
}

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
