/**
 * The decision behind refusing a catalog URL from a service index (issue 10, item 8): an https source may not
 * be downgraded to http, and only a source that is itself on this machine, link-local or the runtime API may
 * name such an address. Sources "elsewhere" need no network: the decision is a function of the two URLs.
 */
import { describe, expect, it } from 'vitest';
import {
  checkCatalogUrl,
  unsafeCatalogUrlReason,
  UnsafeCatalogUrlError,
} from '../../lambda/catalog/catalog-url-safety.js';

const PUBLIC = 'https://api.nuget.org/v3/index.json';
const RUNTIME_API = '127.0.0.1:9001';

describe('unsafeCatalogUrlReason', () => {
  it.each([
    ['http://api.nuget.org/v3/catalog0/index.json', /it is http while the source is https/],
    ['https://127.0.0.1/catalog/index.json', /a loopback or unspecified address \(this machine\)/],
    ['https://127.200.3.4/catalog/index.json', /this machine/],
    ['https://0x7f.1/catalog/index.json', /this machine/], // the URL parser reads it as 127.0.0.1
    ['https://2130706433/catalog/index.json', /this machine/],
    ['https://localhost:8443/catalog/index.json', /this machine/],
    ['https://LOCALHOST./catalog/index.json', /this machine/],
    ['https://feed.localhost/catalog/index.json', /this machine/],
    ['https://[::1]/catalog/index.json', /this machine/],
    ['https://[::]/catalog/index.json', /this machine/],
    ['https://0.0.0.0/catalog/index.json', /this machine/],
    ['https://[::ffff:127.0.0.1]/catalog/index.json', /this machine/],
    [
      'https://169.254.169.254/latest/meta-data/',
      /a link-local address \(where instance and container metadata live\)/,
    ],
    ['https://169.254.170.2/v2/credentials', /link-local/],
    ['https://[fe80::1]/catalog/index.json', /link-local/],
    ['https://[febf::1]/catalog/index.json', /link-local/],
    ['https://[::ffff:169.254.169.254]/latest/', /link-local/],
    ['https://[::169.254.169.254]/latest/', /link-local/],
    ['https://[64:ff9b::169.254.169.254]/latest/', /link-local/],
    ['https://[fd00:ec2::254]/latest/meta-data/', /the instance metadata address/],
  ])('refuses %s named by a public https source', (catalog, reason) => {
    expect(unsafeCatalogUrlReason(PUBLIC, catalog)).toMatch(reason);
  });

  it.each([
    [PUBLIC, 'https://api.nuget.org/v3/catalog0/index.json'],
    [PUBLIC, 'https://nuget.cdn.example/catalog0/index.json'],
    [PUBLIC, 'https://[fec0::1]/catalog/index.json'], // site-local is not fe80::/10
    [PUBLIC, 'https://169.255.0.1/catalog/index.json'],
    [PUBLIC, 'https://126.255.255.255/catalog/index.json'],
    ['http://feed.example/v3/index.json', 'http://feed.example/catalog/index.json'],
    ['http://feed.example/v3/index.json', 'https://feed.example/catalog/index.json'],
    // A catalog served on this machine may name this machine (how the tests run).
    ['http://127.0.0.1:8080/v3/index.json', 'http://127.0.0.1:8081/catalog/index.json'],
    ['http://localhost:8080/v3/index.json', 'http://[::1]:8081/catalog/index.json'],
    ['https://169.254.10.10/v3/index.json', 'https://169.254.10.11/catalog/index.json'],
  ])('lets %s name %s', (source, catalog) => {
    expect(unsafeCatalogUrlReason(source, catalog)).toBeUndefined();
  });

  it('refuses a loopback source naming link-local, and any source naming the Lambda runtime API', () => {
    expect(unsafeCatalogUrlReason('http://localhost:8080/v3/index.json', 'http://169.254.169.254/latest/')).toMatch(
      /link-local/,
    );
    expect(
      unsafeCatalogUrlReason(
        'http://127.0.0.1:8080/v3/index.json',
        'http://127.0.0.1:9001/2018-06-01/runtime/invocation/next',
        RUNTIME_API,
      ),
    ).toMatch(/the Lambda runtime API \(AWS_LAMBDA_RUNTIME_API\)/);
    expect(
      unsafeCatalogUrlReason(
        'http://127.0.0.1:8080/v3/index.json',
        'http://127.0.0.1:8081/catalog/index.json',
        RUNTIME_API,
      ),
    ).toBeUndefined();
  });

  it('throws an error naming the service index and the catalog URL, credentials and query values hidden', () => {
    const source = 'https://me:secret-pat@pkgs.example/v3/index.json';
    let error: unknown;
    try {
      checkCatalogUrl(source, 'http://169.254.169.254/latest/meta-data/?token=abc');
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(UnsafeCatalogUrlError);
    expect((error as Error).message).toBe(
      'https://REDACTED@pkgs.example/v3/index.json: the catalog URL it names, http://169.254.169.254/latest/meta-data/?token=REDACTED, is refused: it is http while the source is https (a downgrade anyone on the path could read and alter)',
    );
  });
});
