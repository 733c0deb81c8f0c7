/**
 * One lean request to S3 (s3-put-client.ts), a PUT or a GET: signed, sent over undici, and its answer read as the
 * retry loop needs it (the status; a GET's body; or S3's error fields, the server's clock and the headers that ask
 * for a wait). What went wrong is named here too: the transport error's code for a retry's `why`, and the
 * {@link S3PutError} or {@link S3PutAbortedError} a request ends with.
 */
import type { Dispatcher } from './undici-agent.js';
import { VERSION } from '../contract/index.js';
import type { PutTarget } from './s3-put-endpoint.js';
import { S3PutAbortedError, S3PutError } from './s3-put-error.js';
import type { S3PutSigner } from './s3-put-signer.js';
import { optional, readLimited, xmlField } from './s3-answer.js';

/** One object to PUT. */
export interface PutRequest {
  readonly bucket: string;
  readonly key: string;
  readonly body: Buffer;
  readonly contentType: string;
  readonly metadata?: Readonly<Record<string, string>>;
}

/** An object read with its ETag (`S3PutClient.read`). */
export interface TaggedObject {
  readonly bytes: Buffer;
  /** The `ETag` as S3 sends it, quotes included (the SDK's `ETag`). */
  readonly etag: string;
}

/** The condition of a conditional PUT: the object's ETag is still this one, or (`*`) there is no object. */
export type PutCondition = { readonly ifMatch: string } | { readonly ifNoneMatch: '*' };

/** An answer of S3: its status, and its body for a GET that succeeded or S3's error fields otherwise. */
export interface Answer {
  readonly status: number;
  readonly code?: string;
  readonly message?: string;
  readonly serverTime?: string;
  readonly date?: string;
  readonly aged?: boolean;
  /** `retry-after` and `x-amz-retry-after`, when an error answer had them (the SDK's strategy honours them). */
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: Buffer;
  /** A GET's `ETag`, as S3 sends it (quotes included), as the SDK's GetObject gives it. */
  readonly etag?: string;
}

/** One attempt's outcome: an answer, or a transport error. */
export type Attempt = Answer | { readonly error: unknown };

/** Which object a request is for, and its method (`PUT` unless said). */
export interface RequestTarget {
  readonly bucket: string;
  readonly key: string;
  readonly method?: 'GET';
}

/** One signed request to send: where, with which headers and body, signed for `signingDate`. */
export interface AttemptRequest {
  readonly method: 'PUT' | 'GET';
  readonly target: PutTarget;
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body: Buffer | undefined;
  readonly signingDate: Date;
  readonly signal: AbortSignal | undefined;
}

/** Up to this much of an error answer's body is read (S3's XML errors are a few hundred bytes). */
const ERROR_BODY_LIMIT = 64 * 1024;
/** Sent on every PUT: CloudTrail and S3 access logs attribute requests by it. */
export const PUT_USER_AGENT = `catalog-sync/${VERSION} (lean-put) node/${process.version}`;

/** Signs and sends one request over `agent`; a connection that fails, or a body cut off, is an outcome too. */
export async function sendAttempt(agent: Dispatcher, signer: S3PutSigner, request: AttemptRequest): Promise<Attempt> {
  const { method, target, path, headers, body, signingDate, signal } = request;
  let response: Dispatcher.ResponseData;
  try {
    const signed =
      method === 'PUT'
        ? await signer.signPut(target, path, headers, signingDate)
        : await signer.signGet(target, path, headers, signingDate);
    signed['user-agent'] = PUT_USER_AGENT;
    response = await agent.request({
      origin: target.origin,
      path,
      method,
      headers: signed,
      ...(body === undefined ? {} : { body }),
      ...(signal ? { signal } : {}),
    });
  } catch (error) {
    return { error };
  }
  if (response.statusCode >= 200 && response.statusCode < 300) {
    if (method === 'PUT') {
      await response.body.dump();
      return { status: response.statusCode };
    }
    const etag = response.headers.etag;
    try {
      return {
        status: response.statusCode,
        body: Buffer.from(await response.body.arrayBuffer()),
        ...optional('etag', typeof etag === 'string' ? etag : undefined),
      };
    } catch (error) {
      // A body cut off on the way: retried like a connection that failed.
      return { error };
    }
  }
  let text = '';
  try {
    text = await readLimited(response.body, ERROR_BODY_LIMIT);
  } catch {
    // The status is the answer; a body cut off on the way leaves only the code unknown.
  }
  const date = response.headers.date;
  return {
    status: response.statusCode,
    ...optional('code', xmlField(text, 'Code')),
    ...optional('message', xmlField(text, 'Message')),
    ...optional('serverTime', xmlField(text, 'ServerTime')),
    ...optional('date', typeof date === 'string' ? date : undefined),
    ...(response.headers.age === undefined ? {} : { aged: true }),
    ...(retryHeaders(response.headers) ?? {}),
  };
}

/**
 * Whether a conditional PUT's answer is S3's refusal of the condition: 412 PreconditionFailed, or 409
 * ConditionalRequestConflict (another conditional write of the key under way). Every 409 counts, as the view took
 * the SDK's PutObject errors before (the lean path and its SDK fallback alike).
 */
export function isConditionRefusal(status: number): boolean {
  return status === 412 || status === 409;
}

/** The error a request ends with after its last attempt (`quotaSpent`: the retry strategy's tokens ran out). */
export function failure(request: RequestTarget, outcome: Attempt, attempts: number, quotaSpent: boolean): S3PutError {
  const where = {
    bucket: request.bucket,
    key: request.key,
    attempts,
    ...(quotaSpent ? { quotaSpent } : {}),
    ...(request.method === undefined ? {} : { method: request.method }),
  };
  if ('error' in outcome) return new S3PutError(where, { cause: outcome.error });
  return new S3PutError({
    ...where,
    status: outcome.status,
    ...optional('s3Code', outcome.code),
    ...optional('s3Message', outcome.message),
  });
}

/** The error of a request `signal` stopped, `when` it did (in words). */
export function aborted(request: RequestTarget, when: string, signal: AbortSignal): S3PutAbortedError {
  return new S3PutAbortedError(request.bucket, request.key, when, { cause: signal.reason });
}

/** The code of a transport error (its own or its cause's), for the retry's `why`. */
export function transportCode(error: unknown): string {
  for (let e: unknown = error, depth = 0; e && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
  }
  return (error as Error | undefined)?.message ?? 'no answer';
}

/** The headers of an error answer that ask for a wait before the retry, as `{ headers }` when it has any. */
function retryHeaders(headers: Dispatcher.ResponseData['headers']): { headers: Record<string, string> } | undefined {
  let found: Record<string, string> | undefined;
  for (const name of ['retry-after', 'x-amz-retry-after']) {
    const value = headers[name];
    if (typeof value === 'string') (found ??= {})[name] = value;
  }
  return found === undefined ? undefined : { headers: found };
}
