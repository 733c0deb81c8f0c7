/**
 * URLs as they may appear in logs and error messages. A source may be configured with credentials in the
 * URL (`https://user:token@host/…`) or served through signed URLs (`?sig=…`, `X-Amz-Signature=…`); neither
 * may reach a log. Catalog URLs carry no query of their own, so every query value is hidden, not only the
 * names known to be secret.
 */
export function redactUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    // Not a URL: hide anything after '?' or before '@' all the same.
    return url.replace(/\?.*$/s, '?REDACTED').replace(/\/\/[^/@]*@/, '//REDACTED@');
  }
  if (parsed.username || parsed.password) {
    parsed.username = 'REDACTED';
    parsed.password = '';
  }
  if (parsed.search) {
    const names = [...new Set([...parsed.searchParams.keys()])];
    parsed.search = names.map((name) => `${encodeURIComponent(name)}=REDACTED`).join('&');
  }
  return parsed.href;
}
