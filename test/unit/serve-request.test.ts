/**
 * What a request to `catalog-sync serve` names (`feedKeyOf`), and where its feed was written for (`checkFeedBase`):
 * every key a target can name lies under `{prefix}feed/`, with no empty or dot segment, whatever the target; a key
 * of the feed's layout is named by its URL path, percent-encoded or not.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkFeedBase, servedPlace } from '../../lambda/serve/feed-base.js';
import { feedKeyOf } from '../../lambda/serve/feed-request.js';

describe('feedKeyOf', () => {
  it('names the key of a path under {prefix}feed/, its segments percent-decoded', () => {
    expect(feedKeyOf('', '/index.json')).toBe('feed/index.json');
    expect(feedKeyOf('nuget/', '/flat/demo.a/1.0.0/demo.a.1.0.0.nupkg')).toBe(
      'nuget/feed/flat/demo.a/1.0.0/demo.a.1.0.0.nupkg',
    );
    expect(feedKeyOf('', '/flat/demo%2Ea/index.json?x=1')).toBe('feed/flat/demo.a/index.json');
    expect(feedKeyOf('', 'http://example.com:8080/index.json')).toBe('feed/index.json');
  });

  it('names nothing for a target that leaves the folder or names no object', () => {
    for (const target of [
      '',
      '*',
      'index.json',
      '/',
      '//index.json',
      '/flat/',
      '/./index.json',
      '/../index.json',
      '/%2e%2e/index.json',
      '/%2E./index.json',
      '/a%2fb',
      '/a%2Fb',
      '/a\\b',
      '/a%5cb',
      '/a%00b',
      '/a%0ab',
      '/%7f',
      '/%zz',
      '/%e0%a4%a',
      'http://example.com',
      'http://example.com/../index.json',
    ])
      expect(feedKeyOf('', target), target).toBe(undefined);
  });

  it('gives, for any target, a key under {prefix}feed/ with no empty, "." or ".." segment and no backslash', () => {
    const targets = fc.oneof(
      fc.string({ unit: 'binary-ascii', maxLength: 40 }).map((text) => `/${text}`),
      fc
        .array(fc.constantFrom('..', '.', '%2e', '%2E%2e', '%2f', '%5c', '\\', 'a', '%41', '', '/'), { maxLength: 8 })
        .map((parts) => `/${parts.join('')}`),
    );
    fc.assert(
      fc.property(targets, (target) => {
        const key = feedKeyOf('p/', target);
        if (key === undefined) return true;
        const segments = key.slice('p/feed/'.length).split('/');
        return (
          key.startsWith('p/feed/') && !segments.some((s) => s === '' || s === '.' || s === '..' || s.includes('\\'))
        );
      }),
    );
  });

  it('names each key of the layout by its path, as given or with every byte percent-encoded', () => {
    const segment = fc.stringMatching(/^[a-z0-9][a-z0-9._-]{0,20}$/).filter((s) => s !== '.' && s !== '..');
    fc.assert(
      fc.property(fc.array(segment, { minLength: 1, maxLength: 5 }), (segments) => {
        const path = segments.join('/');
        expect(feedKeyOf('', `/${path}`)).toBe(`feed/${path}`);
        const encoded = segments.map((s) => [...Buffer.from(s)].map((b) => `%${b.toString(16)}`).join('')).join('/');
        expect(feedKeyOf('', `/${encoded}`)).toBe(`feed/${path}`);
      }),
    );
  });
});

describe('checkFeedBase', () => {
  const index = (...ids: string[]) =>
    Buffer.from(JSON.stringify({ version: '3.0.0', resources: ids.map((id) => ({ '@id': id })) }));
  const local = servedPlace('127.0.0.1', 5080, 'builder');

  it('finds a feed served where it was written for', () => {
    expect(
      checkFeedBase(
        index(
          'http://127.0.0.1:5080/flat/',
          'http://127.0.0.1:5080/registration/',
          'http://127.0.0.1:5080/vulnerabilities/index.json',
        ),
        local,
      ),
    ).toEqual({ bases: ['http://127.0.0.1:5080/'], elsewhere: [] });
    // A BOM, as nuget.org's documents may have.
    expect(
      checkFeedBase(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), index('http://127.0.0.1:5080/flat/')]), local)
        .elsewhere,
    ).toEqual([]);
  });

  it('names the bases written for elsewhere: another origin, port or path', () => {
    expect(checkFeedBase(index('https://nuget.example.com/flat/'), local).elsewhere).toEqual([
      'https://nuget.example.com/',
    ]);
    expect(checkFeedBase(index('http://127.0.0.1:5081/flat/'), local).elsewhere).toEqual(['http://127.0.0.1:5081/']);
    expect(checkFeedBase(index('http://127.0.0.1:5080/nuget/flat/'), local).elsewhere).toEqual([
      'http://127.0.0.1:5080/nuget/',
    ]);
    expect(checkFeedBase(index('http://localhost:5080/flat/'), local).elsewhere).toEqual(['http://localhost:5080/']);
  });

  it('on every interface, takes any host name with the same port as here', () => {
    const everywhere = servedPlace('0.0.0.0', 5080, 'builder');
    expect(everywhere.baseUrl).toBe('http://builder:5080/');
    expect(checkFeedBase(index('http://builder.corp.example:5080/flat/'), everywhere).elsewhere).toEqual([]);
    expect(checkFeedBase(index('http://builder:5081/flat/'), everywhere).elsewhere).toEqual(['http://builder:5081/']);
    expect(servedPlace('::1', 80, 'x').baseUrl).toBe('http://[::1]/');
  });

  it('says what is wrong with a service index NuGet would not read', () => {
    expect(checkFeedBase(Buffer.from('nope'), local).problem).toMatch(/not JSON/);
    expect(checkFeedBase(Buffer.from('{}'), local).problem).toBe('it has no resources array');
    expect(checkFeedBase(index('flat/'), local).problem).toBe('resource "flat/" is not an absolute http(s) URL');
  });
});
