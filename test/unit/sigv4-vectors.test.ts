/**
 * SigV4 checked against an implementation that shares no code with ours: the vectors in
 * test/fixtures/sigv4/aws4-vectors.json were computed once with aws4 (mhart/aws4 1.13.2; the script beside them
 * says how), for keys with every character class S3 keys take (`é € + ( ) ! * ' ~ & = ; , $ @ : %20 %`, runs of
 * spaces, a tab, unicode beyond the BMP), long-term keys and session tokens, virtual-hosted and path-style
 * addressing, in three partitions. The lean PUT's signer (on @smithy/signature-v4) and key encoding must give
 * aws4's canonical path and Authorization exactly; the fault front's verifier (on node:crypto) must accept every
 * vector and refuse it with anything changed.
 */
import { readFileSync } from 'node:fs';
import { S3Client } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { encodeKey } from '../../lambda/stores/s3-put-endpoint.js';
import { S3PutSigner } from '../../lambda/stores/s3-put-signer.js';
import { checkSignedRequest, type SeenRequest } from '../../testkit/s3-signed-request.js';

interface Vector {
  readonly name: string;
  readonly key: string;
  readonly body: string;
  readonly host: string;
  readonly pathPrefix: string;
  readonly region: string;
  readonly credentials: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  readonly headers: Record<string, string>;
  readonly canonicalPath: string;
  readonly authorization: string;
}

const fixture = JSON.parse(readFileSync(new URL('../fixtures/sigv4/aws4-vectors.json', import.meta.url), 'utf8')) as {
  amzDate: string;
  vectors: Vector[];
};
/** The hash the S3 client signs with (Node's, through the SDK). */
const sha256 = new S3Client({ region: 'us-east-1' }).config.sha256;
const signingDate = new Date(
  fixture.amzDate.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, '$1-$2-$3T$4:$5:$6Z'),
);

function asSeen(
  vector: Vector,
  headers: Record<string, string>,
  url = vector.canonicalPath,
  body = vector.body,
): SeenRequest {
  return {
    method: 'PUT',
    url,
    headers: Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value])),
    body: Buffer.from(body),
  };
}

function signedHeadersOf(vector: Vector): Record<string, string> {
  return {
    ...vector.headers,
    host: vector.host,
    authorization: vector.authorization,
    ...(vector.credentials.sessionToken ? { 'x-amz-security-token': vector.credentials.sessionToken } : {}),
  };
}

describe("SigV4 against aws4's vectors", () => {
  it('has vectors for every character class, both credentials kinds and both addressing styles', () => {
    expect(fixture.vectors.length).toBeGreaterThanOrEqual(16);
    expect(fixture.vectors.some((v) => v.key.includes("é € + ( ) ! * ' ~ & = ; , $ @ : %20 %"))).toBe(true);
    expect(fixture.vectors.some((v) => v.credentials.sessionToken !== undefined)).toBe(true);
    expect(fixture.vectors.some((v) => v.pathPrefix === '')).toBe(true);
    expect(fixture.vectors.some((v) => v.pathPrefix !== '')).toBe(true);
  });

  it.each(fixture.vectors.map((v) => [v.name, v] as const))('the lean PUT signs %s as aws4 does', async (_, vector) => {
    const path = `${vector.pathPrefix}/${encodeKey(vector.key)}`;
    expect(path).toBe(vector.canonicalPath);
    const { ['x-amz-date']: _date, ...headers } = vector.headers;
    const signer = new S3PutSigner({
      credentials: async () => vector.credentials,
      region: async () => vector.region,
      sha256,
    });
    const target = {
      origin: `https://${vector.host}`,
      host: vector.host,
      prefix: `${vector.pathPrefix}/`,
      signingRegion: vector.region,
      signingName: 's3',
      headers: {},
    };
    const signed = await signer.signPut(target, path, headers, signingDate);
    expect(signed['x-amz-date']).toBe(fixture.amzDate);
    expect(signed['x-amz-security-token']).toBe(vector.credentials.sessionToken);
    expect(signed.authorization).toBe(vector.authorization);
  });

  it.each(fixture.vectors.map((v) => [v.name, v] as const))(
    'the fault front accepts %s, and refuses it changed',
    (_, vector) => {
      const secrets = { [vector.credentials.accessKeyId]: vector.credentials.secretAccessKey };
      const headers = signedHeadersOf(vector);
      expect(checkSignedRequest(asSeen(vector, headers), secrets, signingDate.getTime())).toBeUndefined();
      const refusedAs = (seen: SeenRequest, now = signingDate.getTime()) =>
        checkSignedRequest(seen, secrets, now)?.code;
      expect(refusedAs(asSeen(vector, headers, vector.canonicalPath.replace(/\.json$/, '.jsoN')))).toBe(
        'SignatureDoesNotMatch',
      );
      expect(refusedAs(asSeen(vector, { ...headers, 'x-amz-meta-nuget-id': 'Other.Package' }))).toBe(
        'SignatureDoesNotMatch',
      );
      expect(refusedAs(asSeen(vector, headers), signingDate.getTime() + 16 * 60_000)).toBe('RequestTimeTooSkewed');
      expect(refusedAs(asSeen(vector, headers, vector.canonicalPath, `${vector.body} `))).toBe(
        'XAmzContentSHA256Mismatch',
      );
      expect(refusedAs(asSeen(vector, headers), signingDate.getTime() - 14 * 60_000)).toBeUndefined();
      if (vector.credentials.sessionToken)
        expect(refusedAs(asSeen(vector, { ...headers, 'x-amz-security-token': 'other' }))).toBe(
          'SignatureDoesNotMatch',
        );
    },
  );
});
