/**
 * The dispatcher of the lean S3 requests, built from undici's `Agent` and `EnvHttpProxyAgent` as loaded without the
 * rest of undici (contract/undici-lean.ts, shared with the catalog's client).
 */
import type * as Undici from 'undici';
import { anyProxy, type ProxyEnv } from '../contract/index.js';
import { Agent, EnvHttpProxyAgent } from '../contract/undici-lean.js';
export type { Dispatcher } from '../contract/undici-lean.js';

/**
 * The dispatcher of the lean S3 requests: `pool` direct, or through the proxies of `proxies` (passed explicitly, as the
 * catalog's client does, so undici does not read the environment a second time; `NO_PROXY` per host).
 */
export function leanDispatcher(pool: Undici.Agent.Options, proxies: ProxyEnv): Undici.Dispatcher {
  if (!anyProxy(proxies)) return new Agent(pool);
  return new EnvHttpProxyAgent({
    ...pool,
    httpProxy: proxies.http?.url ?? '',
    httpsProxy: proxies.https?.url ?? '',
    noProxy: proxies.noProxy,
  });
}
