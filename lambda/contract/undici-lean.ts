/**
 * The two undici dispatchers catalog-sync uses (`Agent`, `EnvHttpProxyAgent`), loaded without the rest of the
 * package. undici's entry point loads everything it offers (fetch, WebSocket, caches, mocks, cookies, EventSource:
 * about two thirds of its code) before any request: a third of the start-up of a CLI command, and of the Lambda
 * bundle, since esbuild cannot leave out parts of a CommonJS module. These are the same files the entry point
 * loads; the request API is put on the dispatchers' prototype as the entry point does it. It is on the ground floor
 * because both the catalog's client and the stores' lean S3 requests build their dispatchers from it (one copy).
 */
import type * as Undici from 'undici';
import agentModule from 'undici/lib/dispatcher/agent.js';
import envProxyAgentModule from 'undici/lib/dispatcher/env-http-proxy-agent.js';
import dispatcherModule from 'undici/lib/dispatcher/dispatcher.js';
import apiModule from 'undici/lib/api/index.js';

// What undici's entry point does: `request`, and `connect`, which the proxy agent's tunnel uses.
Object.assign((dispatcherModule as { prototype: object }).prototype, apiModule as object);

/** undici's `Agent`: a pool of connections per origin. */
export const Agent = agentModule as typeof Undici.Agent;
/** undici's `EnvHttpProxyAgent`: an `Agent` that honours HTTP_PROXY, HTTPS_PROXY and NO_PROXY. */
export const EnvHttpProxyAgent = envProxyAgentModule as typeof Undici.EnvHttpProxyAgent;
export type { Dispatcher } from 'undici';
/** An instance of {@link Agent}. */
export type Agent = Undici.Agent;
/** An instance of {@link EnvHttpProxyAgent}. */
export type EnvHttpProxyAgent = Undici.EnvHttpProxyAgent;
