/**
 * The proxy settings of the environment, as undici's `EnvHttpProxyAgent` reads them: `HTTPS_PROXY` /
 * `HTTP_PROXY` / `NO_PROXY`, lower case first. They are read once, here, and handed to the agent explicitly, so
 * the agent and the error hints (which name the variable in use) never disagree. It is the one owner of the
 * decision for every client: the catalog's (catalog/http-client.ts), the lean S3 requests (stores/undici-agent.ts)
 * and the AWS SDK's (stores/proxy-agents.ts), hence its place on the ground floor.
 */
import { SettingsError } from './settings.js';

/** A proxy and the variable that named it. */
export interface ProxyChoice {
  /** The variable as it is set, e.g. `HTTPS_PROXY` or `https_proxy`. */
  readonly variable: string;
  /** The proxy URL as given (it may carry credentials: show it only through {@link shownProxy}). */
  readonly url: string;
}

/** The proxy variables in effect. */
export interface ProxyEnv {
  readonly http: ProxyChoice | undefined;
  /** For `https:` URLs; falls back to the HTTP proxy, as undici does. */
  readonly https: ProxyChoice | undefined;
  /** The `NO_PROXY` list as given (`''` when unset). */
  readonly noProxy: string;
}

function pick(env: Readonly<Record<string, string | undefined>>, ...names: string[]): ProxyChoice | undefined {
  for (const name of names) {
    const value = env[name];
    if (value !== undefined) return value === '' ? undefined : { variable: name, url: checkedProxyUrl(name, value) };
  }
  return undefined;
}

/** `value` when it is an http(s) URL; a settings error that never quotes it (it may hold a password) otherwise. */
function checkedProxyUrl(name: string, value: string): string {
  const form = 'give it as http://host:port (or http://user:password@host:port)';
  let protocol: string;
  try {
    protocol = new URL(value).protocol;
  } catch {
    protocol = '';
  }
  // `user:password@host:port` parses with `user:` as its scheme: not what was meant either.
  if (protocol === '' || !value.includes('://')) throw new SettingsError(name, `is not a URL: ${form}`);
  if (protocol !== 'http:' && protocol !== 'https:')
    throw new SettingsError(
      name,
      `is a ${protocol.slice(0, -1)} proxy; only http: and https: proxies are supported: ${form}`,
    );
  return value;
}

/**
 * Reads the proxy variables of `env` (the process's environment in the faces).
 * @throws {@link SettingsError} naming the variable when a proxy is not an http(s) URL (its value is not quoted).
 */
export function readProxyEnv(env: Readonly<Record<string, string | undefined>>): ProxyEnv {
  const http = pick(env, 'http_proxy', 'HTTP_PROXY');
  const https = pick(env, 'https_proxy', 'HTTPS_PROXY') ?? http;
  return { http, https, noProxy: env.no_proxy ?? env.NO_PROXY ?? '' };
}

/** Whether any request may go through a proxy (with none, callers keep their plain, direct agents). */
export function anyProxy(proxies: ProxyEnv): boolean {
  return proxies.http !== undefined || proxies.https !== undefined;
}

const DEFAULT_PORTS: Record<string, number> = { 'http:': 80, 'https:': 443 };

/** The proxy a request to `url` goes through, or `undefined` when it goes direct (undici's `NO_PROXY` rules). */
export function proxyFor(proxies: ProxyEnv, url: string): ProxyChoice | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  const choice = parsed.protocol === 'https:' ? proxies.https : proxies.http;
  if (choice === undefined) return undefined;
  const hostname = parsed.host.replace(/:\d*$/, '').toLowerCase();
  const port = Number.parseInt(parsed.port, 10) || DEFAULT_PORTS[parsed.protocol] || 0;
  const noProxy = proxies.noProxy.trim();
  if (noProxy === '*') return undefined;
  for (const entry of noProxy.split(/[,\s]/)) {
    if (!entry) continue;
    const match = /^(.+):(\d+)$/.exec(entry);
    const host = (match ? match[1]! : entry).replace(/^\*?\./, '').toLowerCase();
    const entryPort = match ? Number.parseInt(match[2]!, 10) : 0;
    if (entryPort && entryPort !== port) continue;
    if (hostname === host || hostname.endsWith(`.${host}`)) return undefined;
  }
  return choice;
}

/** `HTTPS_PROXY (http://proxy.example:3128)`: the variable and the proxy's address, never its credentials. */
export function shownProxy(choice: ProxyChoice): string {
  let address: string;
  try {
    const parsed = new URL(choice.url);
    address = `${parsed.protocol}//${parsed.host}`;
  } catch {
    address = 'not a valid URL';
  }
  return `${choice.variable} (${address})`;
}

/**
 * What a proxy's refusal of a tunnel (`CONNECT host`) means, after "the proxy of …": `answered HTTP 407 to the
 * tunnel to host: it …`. Never quotes the proxy URL's credentials; says whether it had any.
 */
export function tunnelRefusal(choice: ProxyChoice, status: number, host: string): string {
  let hasCredentials = false;
  try {
    const parsed = new URL(choice.url);
    hasCredentials = parsed.username !== '' || parsed.password !== '';
  } catch {
    // Not a URL: the agent would not have got this far; say nothing of credentials.
  }
  const what =
    status !== 407
      ? 'could not reach it'
      : hasCredentials
        ? `refused the credentials in ${choice.variable}: correct them`
        : 'asks for credentials: put them in the proxy URL (http://user:password@proxy:port)';
  return `answered HTTP ${status} to the tunnel to ${host}: it ${what}; or list ${host} in NO_PROXY to go direct`;
}
