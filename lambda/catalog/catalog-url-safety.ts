/**
 * Whether a catalog URL read from a service index may be fetched. The service index is a document from the
 * network, and the catalog URL it names becomes an allowed origin: a hostile or compromised index could point
 * the function at the Lambda runtime API, at instance metadata or at another service on the machine, or
 * downgrade an https source to plain http. Such a URL is refused unless the source is itself that kind of
 * address (a catalog served on this machine, as the tests do, may name this machine).
 *
 * Host names are checked as written: a public name that resolves to a private address is not caught here.
 */
import { InvalidDocumentError } from './errors.js';
import { redactUrl } from '../contract/redact.js';
import { ErrorCode } from '../contract/errors.js';

/** The kinds of address a catalog URL must not name unless the source does. */
export type SpecialHost = 'this machine' | 'link-local' | 'instance metadata' | 'Lambda runtime API';

/** What each kind is, for the error message. */
const WHY: Record<SpecialHost, string> = {
  'this machine': 'a loopback or unspecified address (this machine)',
  'link-local': 'a link-local address (where instance and container metadata live)',
  'instance metadata': 'the instance metadata address',
  'Lambda runtime API': 'the Lambda runtime API (AWS_LAMBDA_RUNTIME_API)',
};

/**
 * A catalog URL from a service index that catalog-sync refuses to fetch. Nothing has been requested from it.
 * An {@link InvalidDocumentError} of the service index (and named so), since that is where the fault lies.
 */
export class UnsafeCatalogUrlError extends InvalidDocumentError {
  override get code(): ErrorCode {
    return ErrorCode.unsafeCatalogUrl;
  }
  /** The catalog URL, with any credentials or query values hidden. */
  readonly catalogUrl: string;

  constructor(serviceIndexUrl: string, catalogUrl: string, why: string, options?: ErrorOptions) {
    super(serviceIndexUrl, `the catalog URL it names, ${redactUrl(catalogUrl)}, is refused: ${why}`, options);
    this.catalogUrl = redactUrl(catalogUrl);
  }
}

/**
 * Why `catalogUrl`, named by the service index at `sourceUrl`, must not be fetched; undefined when it may be.
 *
 * @param runtimeApi - `host:port` of the Lambda runtime API (`AWS_LAMBDA_RUNTIME_API`), when running in Lambda.
 */
export function unsafeCatalogUrlReason(sourceUrl: string, catalogUrl: string, runtimeApi?: string): string | undefined {
  const source = new URL(sourceUrl);
  const catalog = new URL(catalogUrl);
  if (source.protocol === 'https:' && catalog.protocol !== 'https:') {
    return `it is ${catalog.protocol.slice(0, -1)} while the source is https (a downgrade anyone on the path could read and alter)`;
  }
  const kind = specialHost(catalog, runtimeApi);
  if (kind === undefined || kind === specialHost(source, runtimeApi)) return undefined;
  return `it names ${WHY[kind]}, which the source (${redactUrl(source.href)}) is not`;
}

/** Throws {@link UnsafeCatalogUrlError} when {@link unsafeCatalogUrlReason} gives a reason. */
export function checkCatalogUrl(
  sourceUrl: string,
  catalogUrl: string,
  runtimeApi = process.env.AWS_LAMBDA_RUNTIME_API,
): void {
  const why = unsafeCatalogUrlReason(sourceUrl, catalogUrl, runtimeApi?.trim() || undefined);
  if (why !== undefined) throw new UnsafeCatalogUrlError(sourceUrl, catalogUrl, why);
}

/** The kind of special address `url` names, if any. The URL parser has already normalized IPv4 forms (0x7f.1). */
export function specialHost(url: URL, runtimeApi?: string): SpecialHost | undefined {
  if (
    runtimeApi !== undefined &&
    URL.canParse(`http://${runtimeApi}`) &&
    url.host === new URL(`http://${runtimeApi}`).host
  )
    return 'Lambda runtime API';
  const host = url.hostname.toLowerCase().replace(/\.$/, '');
  if (host === 'localhost' || host.endsWith('.localhost')) return 'this machine';
  if (host.startsWith('[')) return ipv6Kind(host.slice(1, -1));
  const ipv4 = ipv4Octets(host);
  return ipv4 ? ipv4Kind(ipv4) : undefined;
}

function ipv4Octets(host: string): number[] | undefined {
  const match = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(host);
  return match ? match.slice(1).map(Number) : undefined;
}

function ipv4Kind([a, b]: number[]): SpecialHost | undefined {
  if (a === 127 || a === 0) return 'this machine'; // 0.0.0.0/8 reaches this machine on Linux
  if (a === 169 && b === 254) return 'link-local'; // 169.254.169.254 (EC2), 169.254.170.2 (ECS)
  return undefined;
}

function ipv6Kind(text: string): SpecialHost | undefined {
  const groups = ipv6Groups(text);
  if (!groups) return undefined;
  const zeros = (from: number, to: number) => groups.slice(from, to).every((g) => g === 0);
  if (zeros(0, 7) && (groups[7] === 0 || groups[7] === 1)) return 'this machine'; // :: and ::1
  if ((groups[0]! & 0xffc0) === 0xfe80) return 'link-local'; // fe80::/10
  if (groups.join(':') === [0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254].join(':')) return 'instance metadata'; // fd00:ec2::254
  // IPv4 inside IPv6: mapped (::ffff:a.b.c.d), compatible (::a.b.c.d) and NAT64 (64:ff9b::a.b.c.d) reach that IPv4.
  const mapped = zeros(0, 5) && groups[5] === 0xffff;
  const compatible = zeros(0, 6);
  const nat64 = groups[0] === 0x64 && groups[1] === 0xff9b && zeros(2, 6);
  if (mapped || compatible || nat64) return ipv4Kind([groups[6]! >> 8, groups[6]! & 0xff]);
  return undefined;
}

/** The eight 16-bit groups of an IPv6 address as the URL parser writes it (compressed, hex, no dotted quad). */
function ipv6Groups(text: string): number[] | undefined {
  const [head, tail, ...rest] = text.split('::');
  if (rest.length > 0) return undefined;
  const parse = (part: string | undefined) => (part ? part.split(':').map((g) => Number.parseInt(g, 16)) : []);
  const start = parse(head);
  const end = parse(tail);
  if (tail !== undefined && start.length + end.length > 7) return undefined;
  const groups =
    tail === undefined ? start : [...start, ...new Array<number>(8 - start.length - end.length).fill(0), ...end];
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : undefined;
}
