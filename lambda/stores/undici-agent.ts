/**
 * undici's `Agent` (and `EnvHttpProxyAgent`, behind a proxy) for the lean S3 PUT, loaded without the rest of undici (its entry point loads fetch, WebSocket,
 * caches and mocks first: most of its code). The catalog's client does the same for its own dispatchers
 * (catalog/undici-lean.ts); stores may not import the catalog, hence this twin of a few lines. Both load the same
 * files, so a process that uses both shares one copy.
 */
import type * as Undici from 'undici';
import { anyProxy, type ProxyEnv } from '../contract/index.js';
import agentModule from 'undici/lib/dispatcher/agent.js';
import envProxyAgentModule from 'undici/lib/dispatcher/env-http-proxy-agent.js';
import dispatcherModule from 'undici/lib/dispatcher/dispatcher.js';
import apiModule from 'undici/lib/api/index.js';

// What undici's entry point does to every dispatcher: the request API on the prototype (`connect` is the proxy tunnel's).
Object.assign((dispatcherModule as { prototype: object }).prototype, apiModule as object);

/** undici's `Agent`: a pool of connections per origin. */
export const Agent = agentModule as typeof Undici.Agent;
/** An instance of {@link Agent}. */
export type Agent = Undici.Agent;
/** undici's `EnvHttpProxyAgent`: an `Agent` that sends through a proxy what `NO_PROXY` does not list. */
export const EnvHttpProxyAgent = envProxyAgentModule as typeof Undici.EnvHttpProxyAgent;
export type { Dispatcher } from 'undici';

/**
 * The dispatcher of the lean S3 requests: `pool` direct, or through the proxies of `proxies` (passed explicitly, as the
 * catalog's client does, so undici does not read the environment a second time; `NO_PROXY` per host).
 */
export function leanDispatcher(pool: Undici.Agent.Options, proxies: ProxyEnv): Undici.Dispatcher {
  if (!anyProxy(proxies)) return new Agent(pool);
  return new EnvHttpProxyAgent({ ...pool, httpProxy: proxies.http?.url ?? '', httpsProxy: proxies.https?.url ?? '', noProxy: proxies.noProxy });
}
