/**
 * Errors for catalog documents that fail validation.
 *
 * Every fetched document is untrusted input. When one is rejected, the operator needs to know which
 * document (its URL) and what exactly is wrong with it (a JSON path and the problem), so both are
 * kept as fields and joined into the message.
 */

import { redactUrl } from '../contract/redact.js';
import { CatalogSyncError, ErrorCode } from '../contract/errors.js';

/** The kinds of catalog documents, as they are named in messages. */
export const DocumentKind = {
  serviceIndex: 'service index',
  catalogIndex: 'catalog index',
  page: 'catalog page',
  leaf: 'catalog leaf',
} as const;

/** One of the {@link DocumentKind} names. */
export type DocumentKind = (typeof DocumentKind)[keyof typeof DocumentKind];

/**
 * A fetched document that is not what the protocol says it must be: not JSON, missing or mistyped
 * fields, or inconsistent with itself or with the document that pointed at it.
 *
 * The message is `${url}: ${reason}`, e.g.
 * `https://x/page3.json: items[4].commitTimeStamp: invalid timestamp "2017-13-01T00:00:00Z": month 13 is out of range`.
 */
export class InvalidDocumentError extends CatalogSyncError {
  override readonly name = 'InvalidDocumentError';
  override get code(): ErrorCode {
    return ErrorCode.invalidDocument;
  }

  /**
   * @param url - the URL the document was fetched from.
   * @param reason - what is wrong, starting with the JSON path of the offending value when there is one.
   * @param options - `cause`: the underlying error (a JSON `SyntaxError`, a `ZodError`, a `TimestampError`).
   */
  /** The URL the document was fetched from, with any credentials or query values hidden. */
  readonly url: string;

  constructor(
    url: string,
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    const shown = redactUrl(url);
    super(`${shown}: ${reason}`, options);
    this.url = shown;
  }
}
