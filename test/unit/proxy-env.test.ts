/** The proxy variables as undici's EnvHttpProxyAgent reads them, and how a proxy is shown (never its credentials). */
import { describe, expect, it } from 'vitest';
import { proxyFor, readProxyEnv, shownProxy, tunnelRefusal } from '../../lambda/contract/proxy-env.js';
import { SettingsError } from '../../lambda/contract/settings.js';

describe('proxy variables', () => {
  it('reads lower case before upper case; HTTPS falls back to the HTTP proxy; empty means none', () => {
    expect(readProxyEnv({})).toEqual({ http: undefined, https: undefined, noProxy: '' });
    const both = readProxyEnv({
      http_proxy: 'http://lower:1',
      HTTP_PROXY: 'http://upper:2',
      HTTPS_PROXY: 'http://secure:3',
      NO_PROXY: 'a.example',
    });
    expect(both.http).toEqual({ variable: 'http_proxy', url: 'http://lower:1' });
    expect(both.https).toEqual({ variable: 'HTTPS_PROXY', url: 'http://secure:3' });
    expect(both.noProxy).toBe('a.example');
    expect(readProxyEnv({ HTTP_PROXY: 'http://p:8' }).https).toEqual({ variable: 'HTTP_PROXY', url: 'http://p:8' });
    expect(readProxyEnv({ https_proxy: '', HTTPS_PROXY: 'http://p:8' }).https).toBeUndefined();
  });

  it('NO_PROXY matches hosts, subdomains, ports and *', () => {
    const env = readProxyEnv({
      HTTPS_PROXY: 'http://p:3128',
      NO_PROXY: 'internal.example, .corp.example,127.0.0.1:8080',
    });
    expect(proxyFor(env, 'https://api.nuget.org/v3/index.json')?.variable).toBe('HTTPS_PROXY');
    expect(proxyFor(env, 'https://internal.example/x')).toBeUndefined();
    expect(proxyFor(env, 'https://feed.internal.example/x')).toBeUndefined();
    expect(proxyFor(env, 'https://a.corp.example/x')).toBeUndefined();
    expect(proxyFor(env, 'https://127.0.0.1:8080/x')).toBeUndefined();
    expect(proxyFor(env, 'https://127.0.0.1:8081/x')?.variable).toBe('HTTPS_PROXY');
    expect(proxyFor(env, 'http://api.nuget.org/x')?.variable).toBeUndefined();
    expect(proxyFor(readProxyEnv({ HTTP_PROXY: 'http://p:1', NO_PROXY: '*' }), 'http://x/y')).toBeUndefined();
  });

  it('shows the variable and the proxy address, never its credentials', () => {
    const shown = shownProxy({ variable: 'HTTPS_PROXY', url: 'http://alice:s3cret@proxy.corp.example:3128/' });
    expect(shown).toBe('HTTPS_PROXY (http://proxy.corp.example:3128)');
    expect(shownProxy({ variable: 'HTTP_PROXY', url: 'not a url with user:s3cret@host?x=1' })).not.toContain('s3cret@');
  });
});

describe('a proxy variable that cannot be used', () => {
  it('is a settings error naming the variable, never quoting its value', () => {
    for (const [env, variable, reason] of [
      [{ HTTPS_PROXY: 'http://bob:hunter2@exa mple:3128' }, 'HTTPS_PROXY', 'is not a URL'],
      [{ http_proxy: 'bob:hunter2@proxy:3128' }, 'http_proxy', 'is not a URL'],
      [
        { HTTP_PROXY: 'socks5://bob:hunter2@proxy:1080' },
        'HTTP_PROXY',
        'is a socks5 proxy; only http: and https: proxies are supported',
      ],
    ] as const) {
      const error = (() => {
        try {
          readProxyEnv(env);
        } catch (e) {
          return e;
        }
        return undefined;
      })();
      expect(error).toBeInstanceOf(SettingsError);
      expect((error as SettingsError).message).toMatch(
        new RegExp(`^${variable}: ${reason.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`),
      );
      expect((error as SettingsError).message).not.toContain('hunter2');
    }
  });

  it('a refused tunnel says whether the URL had credentials, and never quotes them', () => {
    const withCredentials = { variable: 'HTTP_PROXY', url: 'http://bob:hunter2@p:3128' };
    expect(tunnelRefusal(withCredentials, 407, 'h:443')).toBe(
      'answered HTTP 407 to the tunnel to h:443: it refused the credentials in HTTP_PROXY: correct them; or list h:443 in NO_PROXY to go direct',
    );
    expect(tunnelRefusal({ variable: 'HTTP_PROXY', url: 'http://p:3128' }, 407, 'h:443')).toContain(
      'it asks for credentials: put them in the proxy URL',
    );
    expect(tunnelRefusal(withCredentials, 502, 'h:443')).toContain('it could not reach it');
  });
});

describe('network hints', () => {
  const coded = (code: string, message = code): Error => Object.assign(new Error(message), { code });
  it('names the host; a broken connection is told from one never made; other errors get none', async () => {
    const { networkHint } = await import('../../lambda/catalog/network-hints.js');
    expect(networkHint(coded('ECONNRESET'), 'https://api.nuget.org/v3/index.json', undefined)).toBe(
      'the connection to api.nuget.org broke (ECONNRESET): check that it is up and reachable from this machine (firewall, VPN); behind a proxy, set HTTPS_PROXY',
    );
    expect(networkHint(new Error('x', { cause: coded('ETIMEDOUT') }), 'http://h:81/x', undefined)).toMatch(
      /^could not connect to h:81 \(ETIMEDOUT\)/,
    );
    expect(networkHint(new AggregateError([coded('ECONNREFUSED')]), 'http://h/x', undefined)).toMatch(
      /^could not connect to h \(ECONNREFUSED\)/,
    );
    expect(
      networkHint(coded('EAI_AGAIN'), 'https://h.example/x', {
        variable: 'https_proxy',
        url: 'http://u:pw@p.example:3128',
      }),
    ).toBe(
      'the host of the proxy of https_proxy (http://p.example:3128) could not be resolved (EAI_AGAIN): check that variable, or list h.example in NO_PROXY to go direct',
    );
    expect(networkHint(coded('UND_ERR_HEADERS_TIMEOUT'), 'https://h/x', undefined)).toBeUndefined();
    expect(networkHint(new Error('HTTP 500'), 'https://h/x', undefined)).toBeUndefined();
  });
});
