/**
 * The cheap per-attempt stop of the HTTP client: the caller's signal gets one listener however many requests
 * run under it, aborting it stops every attempt in flight (and only those), and a body is read whole, bounded,
 * or reported cut short. Against a real local HTTP server.
 */
import { getEventListeners } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AttemptStop, SignalFanOut } from '../../lambda/catalog/http-attempt.js';
import { HttpClient } from '../../lambda/catalog/http-client.js';
import { BodyTooLargeError, FetchAbortedError, FetchError } from '../../lambda/catalog/http-errors.js';

let server: Server;
let origin: string;
let hanging = 0;
let allHanging: () => void = () => undefined;
const BODY = Buffer.from(JSON.stringify({ text: 'x'.repeat(100_000) }));

beforeAll(async () => {
  server = createServer((request, response) => {
    if (request.url === '/hang') {
      // Never answers: only an abort ends it.
      if (++hanging === 3) allHanging();
      return;
    }
    if (request.url === '/cut') {
      // Promises more than it sends, then drops the connection.
      response.writeHead(200, { 'content-length': String(BODY.length) });
      response.write(BODY.subarray(0, 1000), () => response.destroy());
      return;
    }
    if (request.url === '/chunked') {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write(BODY.subarray(0, 50_000));
      response.end(BODY.subarray(50_000));
      return;
    }
    response.writeHead(200, { 'content-length': String(BODY.length) });
    response.end(BODY);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

function client(): HttpClient {
  const http = new HttpClient({
    retry: { attempts: 1, baseDelayMs: 1, maxDelayMs: 1, maxRetryAfterMs: 1 },
    proxyEnv: {},
  });
  http.allowOrigin(origin);
  return http;
}

describe('SignalFanOut', () => {
  it("aborts every watched attempt with the signal's reason, and no released one", () => {
    const fanOut = new SignalFanOut();
    const controller = new AbortController();
    const [a, b, c] = [new AttemptStop(), new AttemptStop(), new AttemptStop()];
    for (const stop of [a, b, c]) fanOut.watch(controller.signal, stop);
    fanOut.release(controller.signal, b);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
    const reason = new Error('stopped');
    controller.abort(reason);
    expect([a.aborted, b.aborted, c.aborted]).toEqual([true, false, true]);
    expect(a.reason).toBe(reason);
  });
});

describe('HttpClient attempts', () => {
  it("adds one listener to the caller's signal however many requests run under it", async () => {
    const http = client();
    const controller = new AbortController();
    const responses = await Promise.all(
      Array.from({ length: 20 }, () => http.get(`${origin}/leaf`, { maxBytes: 1 << 20, signal: controller.signal })),
    );
    expect(responses.every((response) => response.body.equals(BODY))).toBe(true);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
    await http.close();
  });

  it("stops the requests in flight when the caller's signal aborts", async () => {
    const http = client();
    const controller = new AbortController();
    const reached = new Promise<void>((resolve) => (allHanging = resolve));
    const pending = [1, 2, 3].map(() =>
      http.get(`${origin}/hang`, { maxBytes: 1 << 20, signal: controller.signal }).catch((e: unknown) => e),
    );
    // Every request has reached the server before the abort: the abort ends requests in flight.
    await reached;
    controller.abort();
    for (const error of await Promise.all(pending)) {
      expect(error).toBeInstanceOf(FetchAbortedError);
      expect((error as Error).message).toContain(`${origin}/hang: aborted in flight`);
    }
    await http.close();
  });

  it('reads a chunked body whole, bounds it, and reports one cut short as retryable', async () => {
    const http = client();
    expect((await http.get(`${origin}/chunked`, { maxBytes: 1 << 20 })).body.equals(BODY)).toBe(true);
    const large = await http.get(`${origin}/chunked`, { maxBytes: 60_000 }).catch((e: unknown) => e);
    expect(large).toBeInstanceOf(BodyTooLargeError);
    const cut = await http.get(`${origin}/cut`, { maxBytes: 1 << 20 }).catch((e: unknown) => e);
    expect(cut).toBeInstanceOf(FetchError);
    expect((cut as FetchError).retryable).toBe(true);
    expect((cut as Error).message).toMatch(/body interrupted after \d+ bytes/);
    await http.close();
  });
});
