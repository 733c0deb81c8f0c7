/**
 * What a failed fetch tells the user about the network: for DNS and connection errors, a proxy that refused, and a
 * TLS certificate not trusted, a hint naming the host and the variable to set (never a proxy's credentials).
 */
import { shownProxy, tunnelRefusal, type ProxyChoice } from '../contract/proxy-env.js';
import { codeInChain, untrustedCertificateAdvice, untrustedCertificateCode } from '../contract/tls-trust.js';

const DNS_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN']);
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_SOCKET',
]);

/** The codes {@link networkCode} looks for. */
const NETWORK_CODES: ReadonlySet<string> = new Set([...DNS_CODES, ...CONNECTION_CODES]);

/** Codes of a connection that was never made (the others: one that broke). */
const CONNECT_CODES = new Set(['ECONNREFUSED', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT']);

/** The first error code found along the `cause` chain (and in an `AggregateError`'s errors). */
export function networkCode(error: unknown): string | undefined {
  return codeInChain(error, NETWORK_CODES);
}

/** The status a proxy answered a tunnel (`CONNECT`) with, when that is what failed. */
function proxyStatus(error: unknown): number | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 8 && current instanceof Error; depth++) {
    const match = /Proxy response \((\d+)\)/.exec(current.message);
    if (match) return Number(match[1]);
    current = current.cause;
  }
  return undefined;
}

/** A network error in words: `CODE: message`. */
export function describeNetworkError(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: string }).code ?? networkCode(error);
    const message =
      error.message ||
      (error instanceof AggregateError ? error.errors.map((e) => (e as Error).message).join('; ') : '');
    return code ? `${code}: ${message}` : message;
  }
  return String(error);
}

/**
 * The hint for a fetch of `url` that failed with `error`, when it is a DNS, connection or proxy error;
 * `proxy` is the proxy the request went through, if any.
 */
export function networkHint(error: unknown, url: string, proxy: ProxyChoice | undefined): string | undefined {
  let host: string;
  let variable: string;
  try {
    const parsed = new URL(url);
    host = parsed.host;
    variable = parsed.protocol === 'https:' ? 'HTTPS_PROXY' : 'HTTP_PROXY';
  } catch {
    return undefined;
  }
  const status = proxyStatus(error);
  if (proxy !== undefined && status !== undefined) {
    return `the proxy of ${shownProxy(proxy)} ${tunnelRefusal(proxy, status, host)}`;
  }
  const certificate = untrustedCertificateCode(error);
  if (certificate !== undefined) return untrustedCertificateAdvice(host, certificate);
  const code = networkCode(error);
  if (code === undefined) return undefined;
  if (DNS_CODES.has(code)) {
    if (proxy !== undefined) {
      return `the host of the proxy of ${shownProxy(proxy)} could not be resolved (${code}): check that variable, or list ${host} in NO_PROXY to go direct`;
    }
    return `the host ${host} could not be resolved (${code}): check the network connection, DNS and the URL; behind a proxy, set ${variable} (and NO_PROXY for hosts to reach directly)`;
  }
  if (CONNECTION_CODES.has(code)) {
    if (proxy !== undefined) {
      return `requests to ${host} go through the proxy of ${shownProxy(proxy)}, and the connection failed (${code}): check that the proxy is up and reachable, or list ${host} in NO_PROXY to go direct`;
    }
    const what = CONNECT_CODES.has(code) ? `could not connect to ${host}` : `the connection to ${host} broke`;
    return `${what} (${code}): check that it is up and reachable from this machine (firewall, VPN); behind a proxy, set ${variable}`;
  }
  return undefined;
}
