/**
 * The zod schemas of single fields that several documents share: http(s) URLs (with the rules a
 * catalog URL must keep), non-empty strings, counts, timestamps to the tick and `@type` resolved to
 * one leaf type.
 *
 * Built on first use ({@link fieldSchemas}), not at load: a file whose top level builds nothing can be left out of
 * a bundle by whatever does not use it, and zod (a fifth of a command's start-up) is loaded only when a document
 * needs it (lambda/catalog/read-documents.ts).
 */
import * as z from 'zod';
import { resolveLeafType, stringsError, urlProblem } from './field-checks.js';
import { parseTimestamp, type Ticks } from '../contract/time.js';

/** A timestamp as written plus its exact ticks. */
export interface Stamp {
  readonly text: string;
  readonly ticks: Ticks;
}

function build() {
  const httpUrl = z.string().check((ctx) => {
    const problem = urlProblem(ctx.value);
    if (problem !== undefined) ctx.issues.push({ code: 'custom', message: problem, input: ctx.value });
  });

  const nonEmptyString = z.string().min(1, { error: 'must not be empty' });

  const nonNegativeInteger = z
    .number()
    .int({ error: (issue) => `expected an integer, got ${String(issue.input)}` })
    .min(0, { error: (issue) => `must not be negative, got ${String(issue.input)}` });

  const timestamp = z.string().transform((text, ctx): Stamp => {
    try {
      return { text, ticks: parseTimestamp(text) };
    } catch (error) {
      // TimestampError's message is `invalid timestamp "…": reason`, which is what the reader needs.
      const message = error instanceof Error ? error.message : String(error);
      ctx.issues.push({ code: 'custom', message, input: text });
      return z.NEVER;
    }
  });

  const typeList = z.union([z.string(), z.array(z.string())], { error: stringsError });

  /** `@type` (a string or an array of strings) resolved to its leaf type, keeping every type name. */
  const leafTypeField = typeList.transform((value, ctx) => {
    const types = typeof value === 'string' ? [value] : value;
    const type = resolveLeafType(types);
    if (typeof type === 'object') {
      ctx.issues.push({ code: 'custom', message: type.problem, input: value });
      return z.NEVER;
    }
    return { types, type };
  });

  return { httpUrl, nonEmptyString, nonNegativeInteger, timestamp, typeList, leafTypeField };
}

let built: ReturnType<typeof build> | undefined;

/** The field schemas, built once on first use. */
export function fieldSchemas(): ReturnType<typeof build> {
  return (built ??= build());
}
