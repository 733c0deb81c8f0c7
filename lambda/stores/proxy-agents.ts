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
import { anyProxy, proxyFor, readProxyEnv, SettingsError, shownProxy, tunnelRefusal, type ProxyChoice, type ProxyEnv } from '../contract/index.js';

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
    callback(Number(status) === 407 ? new SettingsError(shownProxy(choice), reason, { cause: error }) : new Error(`the proxy of ${shownProxy(choice)} ${reason}`, { cause: error }));
  };
}

/** hpagent's tunnel for `http:` origins, or a plain connection where `NO_PROXY` says so. */
class RoutedHttpAgent extends HttpProxyAgent {
  constructor(
    private readonly proxies: ProxyEnv,
    options: AgentOptions & { proxy: string },
  ) {
    super(options);
  }

  override createConnection(options: ConnectionOptions, callback: ConnectionCallback): Duplex | undefined {
    const plain = HttpAgent.prototype as unknown as { createConnection: CreateConnection };
    const tunnel = HttpProxyAgent.prototype as unknown as { createConnection: CreateConnection };
    if (direct(this.proxies, 'http:', options)) return plain.createConnection.call(this, options, callback);
    return tunnel.createConnection.call(this, options, explained(this.proxies.http!, options, callback));
  }
}

/** hpagent's tunnel for `https:` origins (TLS inside it), or a plain TLS connection where `NO_PROXY` says so. */
class RoutedHttpsAgent extends HttpsProxyAgent {
  constructor(
    private readonly proxies: ProxyEnv,
    options: AgentOptions & { proxy: string },
  ) {
    super(options);
  }

  override createConnection(options: ConnectionOptions, callback: ConnectionCallback): Duplex | undefined {
    const plain = HttpsAgent.prototype as unknown as { createConnection: CreateConnection };
    const tunnel = HttpsProxyAgent.prototype as unknown as { createConnection: CreateConnection };
    if (direct(this.proxies, 'https:', options)) return plain.createConnection.call(this, options, callback);
    return tunnel.createConnection.call(this, options, explained(this.proxies.https!, options, callback));
  }
}

/** Options of {@link sdkRequestHandler}. */
export interface SdkHandlerOptions {
  /** Sockets per origin; default the SDK's 50. */
  readonly sockets?: number;
  /** ms to open a connection (the tunnel included). */
  readonly connectionTimeout: number;
  /** ms of silence on a request before it fails. */
  readonly requestTimeout: number;
}

/**
 * The `requestHandler` options of an SDK client: keep-alive agents with `sockets` per origin, through the proxy the
 * variables of `env` name for each origin (plain agents when none is set).
 */
export function sdkRequestHandler(env: Readonly<Record<string, string | undefined>>, options: SdkHandlerOptions) {
  const proxies = readProxyEnv(env);
  const agent: AgentOptions = { keepAlive: true, maxSockets: options.sockets ?? 50 };
  const timeouts = { connectionTimeout: options.connectionTimeout, requestTimeout: options.requestTimeout };
  if (!anyProxy(proxies)) return { httpAgent: new HttpAgent(agent), httpsAgent: new HttpsAgent(agent), ...timeouts };
  return {
    httpAgent: proxies.http ? new RoutedHttpAgent(proxies, { ...agent, proxy: proxies.http.url }) : new HttpAgent(agent),
    httpsAgent: proxies.https ? new RoutedHttpsAgent(proxies, { ...agent, proxy: proxies.https.url }) : new HttpsAgent(agent),
    ...timeouts,
  };
}
