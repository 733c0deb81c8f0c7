/**
 * Where the source serves its packages: the `PackageBaseAddress/3.0.0` resource of its service index (nuget.org's
 * `https://api.nuget.org/v3-flatcontainer/`), fetched under the catalog client's rules: the service index is a document
 * from the network, so the address it names must not aim the feed at this machine's services or downgrade https
 * (`checkCatalogUrl`), and it becomes the only other origin the feed's HTTP client may reach.
 */
import { checkCatalogUrl } from '../catalog/catalog-url-safety.js';
import type { HttpClient } from '../catalog/http-client.js';
import type { RequestBounds } from '../catalog/http-options.js';
import { parseServiceIndex } from '../catalog/service-index.js';
import { detectSourceKind } from '../catalog/source-kind.js';
import { parseJson } from '../catalog/json.js';
import { encodeKeySegment, idSegment } from '../contract/identity.js';
import { FeedError } from './errors.js';

/** The `@type` of the flat container in a service index. */
export const PACKAGE_BASE_ADDRESS_TYPE = 'PackageBaseAddress/3.0.0';

/** A service index is small; nuget.org's is about 10 KB. */
const SERVICE_INDEX_BYTES = 4 * 1024 * 1024;

/** The source's flat container, and the package URLs in it. */
export class PackageSource {
  /** The flat container's URL, ending in `/`. */
  readonly baseAddress: string;

  private constructor(baseAddress: string) {
    this.baseAddress = baseAddress.endsWith('/') ? baseAddress : `${baseAddress}/`;
  }

  /**
   * Finds the flat container in the service index at `source` (or takes `baseAddress` as given, an operator's
   * setting), and allows its origin on `http`.
   *
   * @throws {@link FeedError} when the source has no `PackageBaseAddress/3.0.0` (a catalog index given as the
   *   source has none: give the base address); the catalog client's errors for a service index it refuses.
   */
  static async open(
    http: HttpClient,
    source: string,
    options: { readonly baseAddress?: string } & RequestBounds = {},
  ): Promise<PackageSource> {
    let address = options.baseAddress;
    if (address === undefined) {
      const { baseAddress: _ignored, ...bounds } = options;
      const response = await http.get(source, { maxBytes: SERVICE_INDEX_BYTES, anyOrigin: true, ...bounds });
      const json = parseJson(response.body, source);
      if (detectSourceKind(json, source) !== 'service-index')
        throw new FeedError(
          `${source} is a catalog index, which names no flat container: give the source's service index, or the package base address (PackageBaseAddress/3.0.0) itself`,
          { setting: 'source' },
        );
      const index = parseServiceIndex(response.body, source);
      const resource = index.resources.find((each) => {
        const types = each['@type'];
        return (
          types === PACKAGE_BASE_ADDRESS_TYPE || (Array.isArray(types) && types.includes(PACKAGE_BASE_ADDRESS_TYPE))
        );
      });
      if (resource === undefined)
        throw new FeedError(
          `${source}: the service index has no ${PACKAGE_BASE_ADDRESS_TYPE} resource, so the feed cannot download packages from it`,
          { setting: 'source' },
        );
      address = resource['@id'];
      checkCatalogUrl(source, address);
    } else if (!/^https?:\/\//.test(address)) {
      throw new FeedError(`package base address ${JSON.stringify(address)} must be an absolute http or https URL`, {
        setting: 'source',
      });
    }
    http.allowOrigin(new URL(address).origin);
    return new PackageSource(address);
  }

  /** `{base}{lowerid}/{lowerversion}/{lowerid}.{lowerversion}.nupkg`; `version` is the identity form. */
  packageUrl(id: string, version: string): string {
    const lowerId = idSegment(id);
    const lowerVersion = encodeKeySegment(version);
    return `${this.baseAddress}${lowerId}/${lowerVersion}/${lowerId}.${lowerVersion}.nupkg`;
  }
}
