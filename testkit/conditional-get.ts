/**
 * Validators and conditional GET (RFC 9110 §13): `ETag` / `If-None-Match` first, and only when
 * that header is absent `Last-Modified` / `If-Modified-Since`.
 */
import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

/**
 * A weak entity tag of a body. Weak, because the same tag is sent whatever content coding the
 * body is compressed with (a strong tag would have to differ per coding).
 */
export function entityTag(body: Buffer): string {
  return `W/"${createHash('sha1').update(body).digest('base64url')}"`;
}

/** True when the request's validators say the client already has this representation. */
export function isNotModified(headers: IncomingHttpHeaders, etag: string, lastModified: Date | undefined): boolean {
  const ifNoneMatch = headers['if-none-match'];
  if (ifNoneMatch !== undefined) {
    const opaque = (tag: string): string => tag.trim().replace(/^W\//, '');
    return ifNoneMatch.split(',').some((tag) => tag.trim() === '*' || opaque(tag) === opaque(etag));
  }
  const ifModifiedSince = headers['if-modified-since'];
  if (ifModifiedSince === undefined || lastModified === undefined) return false;
  const since = Date.parse(ifModifiedSince);
  // HTTP dates have one-second resolution: a change within the same second is not seen.
  return Number.isFinite(since) && lastModified.getTime() <= since;
}
