/**
 * The value of SOURCE_SECRET_ARN's secret: its two forms, and errors that name the setting and the secret but
 * never quote the value. Joining it to the source URL keeps every character of the password.
 */
import { describe, expect, it } from 'vitest';
import { parseSourceSecret, TOKEN_USER_NAME, withSourceCredentials } from '../../lambda/runtime/source-secret.js';
import { parseSettings } from '../../lambda/contract/settings.js';

const ID = 'catalog-sync/feed';
const PASSWORD = 'pat-%41:@/ é"}';

describe('parseSourceSecret', () => {
  it('reads {"username", "password"}, {"password"} and a bare token', () => {
    expect(parseSourceSecret(ID, JSON.stringify({ username: 'me', password: PASSWORD }))).toEqual({
      username: 'me',
      password: PASSWORD,
    });
    expect(parseSourceSecret(ID, JSON.stringify({ password: PASSWORD }))).toEqual({
      username: TOKEN_USER_NAME,
      password: PASSWORD,
    });
    expect(parseSourceSecret(ID, ' ghp_token123\n')).toEqual({ username: TOKEN_USER_NAME, password: 'ghp_token123' });
  });

  it.each([
    [undefined, 'has no SecretString (a binary secret)'],
    ['  ', 'is empty'],
    ['{"password": pat-unquoted}', 'starts with "{" but is not valid JSON'],
    [JSON.stringify({ user: 'me', pass: PASSWORD }), 'must hold "password"'],
    [JSON.stringify({ username: 'me', password: '' }), 'has an empty "password"'],
    [JSON.stringify({ username: `me:${PASSWORD}`, password: PASSWORD }), 'has a "username" holding ":"'],
  ])('refuses %j naming the setting and the secret, quoting nothing of it', (value, reason) => {
    let error: Error | undefined;
    try {
      parseSourceSecret(ID, value);
    } catch (caught) {
      error = caught as Error;
    }
    expect(error?.message).toContain(`SOURCE_SECRET_ARN: secret ${ID} ${reason}`);
    expect(`${error?.message}${JSON.stringify(error)}`).not.toContain('pat-');
  });
});

describe('withSourceCredentials', () => {
  it('joins them to the source URL so that decoding gives them back exactly', () => {
    const raw = { CATALOG_SOURCE: 'https://pkgs.example/feed/v3/index.json' };
    const joined = new URL(
      withSourceCredentials(raw, parseSettings(raw), { username: 'me@corp', password: PASSWORD }).source,
    );
    expect([decodeURIComponent(joined.username), decodeURIComponent(joined.password)]).toEqual(['me@corp', PASSWORD]);
    expect(joined.origin + joined.pathname).toBe(raw.CATALOG_SOURCE);
  });

  it('refuses to send them over plain HTTP to another machine, naming both settings', () => {
    const raw = { CATALOG_SOURCE: 'http://pkgs.example/v3/index.json' };
    expect(() => withSourceCredentials(raw, parseSettings(raw), { username: 'me', password: PASSWORD })).toThrow(
      /^CATALOG_SOURCE \(with the credentials of SOURCE_SECRET_ARN\): "http:\/\/REDACTED@pkgs\.example\/v3\/index\.json" has credentials: they are sent over https only/,
    );
  });
});
