/**
 * Bodies, JSON and problem messages, shared by every document's parser: decoding (one BOM, strict
 * UTF-8), `JSON.parse` with a readable error, and {@link Problems}, which collects a document's
 * problems (from zod and from the cross-item checks) into one bounded {@link InvalidDocumentError}.
 *
 * Everything fetched is untrusted input (contract: "Untrusted input"), so every message is clipped:
 * hostile input can be huge.
 */
import type * as z from 'zod';
import { InvalidDocumentError, type DocumentKind } from './errors.js';
import type { DocumentBody } from './documents.js';

// `ignoreBOM: false` (the default) makes the decoder consume one leading BOM, which nuget.org's
// writer puts on some leaves. `fatal` rejects invalid UTF-8 instead of silently replacing it.
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Longest quoted value or message part put into an error message: hostile input can be huge. */
const MAX_SHOWN = 200;
/** Most problems listed in one error message. */
const MAX_LISTED = 3;

export function clip(text: string): string {
  return text.length <= MAX_SHOWN ? text : `${text.slice(0, MAX_SHOWN)}… (${text.length} characters)`;
}

export function quote(value: string): string {
  return clip(JSON.stringify(value));
}

export function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

function decode(body: DocumentBody, url: string): string {
  if (typeof body === 'string') return body.charCodeAt(0) === 0xfeff ? body.slice(1) : body;
  try {
    return utf8.decode(body);
  } catch (error) {
    throw new InvalidDocumentError(url, 'not valid UTF-8', { cause: error });
  }
}

/**
 * Decodes a body (stripping one leading UTF-8 BOM) and parses it as JSON.
 *
 * @throws {@link InvalidDocumentError} `${url}: not valid JSON: …` (or `not valid UTF-8`).
 */
export function parseJson(body: DocumentBody, url: string): unknown {
  const text = decode(body, url);
  if (text.trim() === '') throw new InvalidDocumentError(url, 'not valid JSON: the body is empty');
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new InvalidDocumentError(url, `not valid JSON: ${clip(message)}`, { cause: error });
  }
}

export function requireObject(json: unknown, url: string, kind: DocumentKind): Record<string, unknown> {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw new InvalidDocumentError(url, `expected the ${kind} to be a JSON object, got ${typeName(json)}`);
  }
  return json as Record<string, unknown>;
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

/** `items[4].commitTimeStamp`, `items[0]["@id"]`: JavaScript accessor syntax, exact for any key. */
function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else if (typeof key === 'string' && IDENTIFIER.test(key)) out += out === '' ? key : `.${key}`;
    else out += `[${JSON.stringify(String(key))}]`;
  }
  return out === '' ? '(document)' : out;
}

/**
 * Collects the problems of one document, from zod and from the cross-item checks alike. Only the
 * first few are kept for the message, but all are counted, so a document with a million bad items
 * still costs one linear pass and gives a short message.
 */
export class Problems {
  private readonly shown: string[] = [];
  private total = 0;
  /** The first underlying error (a `ZodError`), kept as the thrown error's `cause`. */
  cause: unknown;

  add(path: readonly PropertyKey[], message: string): void {
    this.total += 1;
    if (this.shown.length < MAX_LISTED) this.shown.push(`${formatPath(path)}: ${clip(message)}`);
  }

  throwIfAny(url: string): void {
    if (this.total === 0) return;
    const more = this.total - this.shown.length;
    const tail = more > 0 ? `; and ${more} more problem${more === 1 ? '' : 's'}` : '';
    const options = this.cause === undefined ? undefined : { cause: this.cause };
    throw new InvalidDocumentError(url, this.shown.join('; ') + tail, options);
  }
}

// Applied per parse (not globally) so other users of zod in the process keep their own messages;
// schema-level messages below still take precedence.
const errorMap: z.core.$ZodErrorMap = (issue) => {
  if (issue.code === 'invalid_type') {
    return issue.input === undefined
      ? `missing (expected ${issue.expected})`
      : `expected ${issue.expected}, got ${typeName(issue.input)}`;
  }
  return undefined;
};

/** Runs a schema, recording its issues in `problems`; returns the data only when there were none. */
export function check<T extends z.ZodType>(schema: T, json: unknown, problems: Problems): z.output<T> | undefined {
  const result = schema.safeParse(json, { error: errorMap });
  if (result.success) return result.data;
  problems.cause ??= result.error;
  for (const issue of result.error.issues) problems.add(issue.path, issue.message);
  return undefined;
}
