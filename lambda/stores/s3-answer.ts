/** Reading S3's answers: its XML error fields, and a bounded error body. */
import type { Dispatcher } from './undici-agent.js';

/** `{ [name]: value }`, or nothing when `value` is undefined (for optional fields under exactOptionalPropertyTypes). */
export function optional<K extends string>(name: K, value: string | undefined): { [P in K]?: string } {
  return (value === undefined ? {} : { [name]: value }) as { [P in K]?: string };
}

/** The text of `<name>…</name>` in S3's XML error body, entities decoded. */
export function xmlField(xml: string, name: string): string | undefined {
  const match = new RegExp(`<${name}>([^<]*)</${name}>`).exec(xml);
  if (!match) return undefined;
  return match[1]!.replace(
    /&(lt|gt|quot|apos|amp);/g,
    (_, entity: string) => ({ lt: '<', gt: '>', quot: '"', apos: "'", amp: '&' })[entity]!,
  );
}

/** Up to `limit` characters of a response body, read to its end (so the connection can be reused). */
export async function readLimited(body: Dispatcher.ResponseData['body'], limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    if (size < limit) chunks.push(chunk);
    size += chunk.length;
  }
  return Buffer.concat(chunks).toString('utf8').slice(0, limit);
}
