/**
 * The connection agents of every AWS SDK client (S3, DynamoDB, Secrets Manager, Step Functions), honouring
 * `HTTPS_PROXY` / `HTTP_PROXY` / `NO_PROXY` as the catalog's client does. Which connection goes through which proxy
 * is decided by the contract's {@link proxyFor}, the one owner of that decision, per origin as each connection is
 * opened: an S3 bucket host may be listed in `NO_PROXY` while DynamoDB's is not. The tunnel itself (`CONNECT`,
 * Basic credentials from the proxy URL, keep-alive) is hpagent's; its errors never quote the proxy URL.
 */
import { Agent as HttpAgent, type AgentOptions } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { Duplex } from 'node:stream';
import { HttpProxyAgent, HttpsProxyAgent } from 'hpagent';
import {
  anyProxy,
  proxyFor,
  readProxyEnv,
  SettingsError,
  shownProxy,
  tunnelRefusal,
  type ProxyChoice,
  type ProxyEnv,
} from '../contract/index.js';

/** What Node's agents pass to `createConnection`. */
interface ConnectionOptions {
  readonly host?: string | null;
  readonly port?: number | string | null;
}
type ConnectionCallback = (error: Error | null, socket?: Duplex) => void;
type CreateConnection = (options: ConnectionOptions, callback: ConnectionCallback) => Duplex | undefined;

/** `true` when a connection to `scheme//host:port` goes direct under `proxies`. */
function direct(proxies: ProxyEnv, scheme: 'http:' | 'https:', options: ConnectionOptions): boolean {
  const host = options.host ?? 'localhost';
  const port = options.port ?? (scheme === 'https:' ? 443 : 80);
  return proxyFor(proxies, `${scheme}//${host.includes(':') ? `[${host}]` : host}:${port}`) === undefined;
}

/**
 * `callback` with hpagent's bare `Bad response: 407` turned into what it means, naming the variable and the proxy's
 * address: a 407 is a setting to correct ({@link SettingsError}: the CLI exits 2), any other refusal a failure.
 */
function explained(choice: ProxyChoice, options: ConnectionOptions, callback: ConnectionCallback): ConnectionCallback {
  return (error, socket) => {
    const status = error ? /^Bad response: (\d{3})$/.exec(error.message)?.[1] : undefined;
    if (!error || status === undefined) return callback(error, socket);
    const host = `${options.host ?? 'localhost'}:${options.port ?? ''}`;
    const reason = tunnelRefusal(choice, Number(status), host);
    callback(
      Number(status) === 407
        ? new SettingsError(shownProxy(choice), reason, { cause: error })
        : new Error(`the proxy of ${shownProxy(choice)} ${reason}`, { cause: error }),
    );
  };
}

const createConnectionOf = (prototype: object): CreateConnection =>
  (prototype as { createConnection: CreateConnection }).createConnection;

/**
 * hpagent's agent for `scheme` origins through `choice`, opening each connection as a tunnel, or plainly (TLS for
 * `https:`) where `NO_PROXY` lists the origin: one pool, keyed by origin as every Node agent's is.
 */
function routedAgent(
  scheme: 'http:' | 'https:',
  proxies: ProxyEnv,
  choice: ProxyChoice,
  options: AgentOptions,
): HttpAgent {
  const Tunnel = scheme === 'https:' ? HttpsProxyAgent : HttpProxyAgent;
  const plain = createConnectionOf((scheme === 'https:' ? HttpsAgent : HttpAgent).prototype);
  const tunnel = createConnectionOf(Tunnel.prototype);
  const agent = new Tunnel({ ...options, proxy: choice.url });
  const routed: CreateConnection = function (this: HttpAgent, connection, callback) {
    if (direct(proxies, scheme, connection)) return plain.call(this, connection, callback);
    return tunnel.call(this, connection, explained(choice, connection, callback));
  };
  // Node's agents open every connection through `this.createConnection`.
  Object.assign(agent, { createConnection: routed });
  return agent;
}

/** Options of {@link sdkRequestHandler}. */
export interface SdkHandlerOptions {
  /** Sockets per origin; default the SDK's 50. */
  readonly sockets?: number;
  /** ms to open a connection (the tunnel included). */
  readonly connectionTimeout: number;
  /** ms from sending a request to its answer's headers before it fails (a TimeoutError, which the SDK retries). */
  readonly requestTimeout: number;
}

/**
 * The `requestHandler` options of an SDK client: keep-alive agents with `sockets` per origin, through the proxy the
 * variables of `env` name for each origin (plain agents when none is set).
 */
export function sdkRequestHandler(env: Readonly<Record<string, string | undefined>>, options: SdkHandlerOptions) {
  const proxies = readProxyEnv(env);
  const agent: AgentOptions = { keepAlive: true, maxSockets: options.sockets ?? 50 };
  // Without throwOnRequestTimeout, @smithy/node-http-handler 4 only logs a warning when requestTimeout passes, and a
  // server that never answers holds the request for ever.
  const timeouts = {
    connectionTimeout: options.connectionTimeout,
    requestTimeout: options.requestTimeout,
    throwOnRequestTimeout: true,
  };
  if (!anyProxy(proxies)) return { httpAgent: new HttpAgent(agent), httpsAgent: new HttpsAgent(agent), ...timeouts };
  return {
    httpAgent: proxies.http ? routedAgent('http:', proxies, proxies.http, agent) : new HttpAgent(agent),
    httpsAgent: proxies.https ? routedAgent('https:', proxies, proxies.https, agent) : new HttpsAgent(agent),
    ...timeouts,
  };
}
