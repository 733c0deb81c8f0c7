/**
 * What the tests of the test kit's catalog replica share: plain HTTP requests to it (undici, no catalog client in
 * between), the shapes of its index and page documents, and the order of exact time.
 */
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { expect } from 'vitest';
import { parseTimestamp } from '../../lambda/contract/time.js';

export const FIXTURES = fileURLToPath(new URL('../fixtures/NuGetGallery/NgTests-TestCatalogEntries', import.meta.url));

export interface Fetched {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

export async function get(url: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Fetched> {
  const response = await request(url, { method: method as 'GET', headers });
  return {
    status: response.statusCode,
    headers: response.headers,
    body: Buffer.from(await response.body.arrayBuffer()),
  };
}

export async function getJson<T>(url: string): Promise<T> {
  const { status, body } = await get(url);
  expect(status, url).toBe(200);
  return JSON.parse(body.toString('utf8')) as T;
}

export interface Index {
  '@id': string;
  commitId: string;
  commitTimeStamp: string;
  count: number;
  items: { '@id': string; '@type': string; commitId: string; commitTimeStamp: string; count: number }[];
}
export interface Page {
  '@id': string;
  commitId: string;
  commitTimeStamp: string;
  count: number;
  parent: string;
  items: {
    '@id': string;
    '@type': string;
    commitId: string;
    commitTimeStamp: string;
    'nuget:id': string;
    'nuget:version': string;
  }[];
}

export const ticks = (text: string): bigint => parseTimestamp(text);
export const isSortedByTime = (items: readonly { commitTimeStamp: string }[]): boolean =>
  items.every((item, i) => i === 0 || ticks(items[i - 1]!.commitTimeStamp) <= ticks(item.commitTimeStamp));
