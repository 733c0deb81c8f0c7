/**
 * The small IAM evaluator the grant tests judge recorded calls with (testkit/iam-evaluator.ts), checked on its own:
 * S3's rule that a GET of a missing key answers 404 only with `s3:ListBucket`, wildcards in actions and ARNs,
 * DynamoDB's leading keys, and a refusal of what it does not model. test/integration/iam-grants.test.ts uses it.
 */
import { describe, expect, it } from 'vitest';
import type { RecordedCall } from '../../testkit/aws-request-recorder.js';
import { allows, requiredPermissions, uncovered, type TemplateNames } from '../../testkit/iam-evaluator.js';

const REGION = 'us-east-1';
const ACCOUNT = '123456789012';

describe('the IAM evaluator itself', () => {
  const names: TemplateNames = { region: REGION, account: ACCOUNT, tables: { T: 'cursors' }, buckets: { B: 'mirror' } };
  const bucketArn = { 'Fn::GetAtt': ['B', 'Arn'] };
  const objects = (under: string) => ({ 'Fn::Join': ['', [bucketArn, `/${under}`]] });
  const missing: RecordedCall = {
    service: 's3',
    method: 'GET',
    bucket: 'mirror',
    key: 'p/watermark.json',
    status: 404,
  };
  const found: RecordedCall = { ...missing, status: 200 };
  const getUnder = { Effect: 'Allow', Action: 's3:GetObject', Resource: objects('p/*') };

  it('a found key needs GetObject; a missing one ListBucket too, which a statement conditioned on s3:prefix does not give', () => {
    expect(uncovered([getUnder], [found], names)).toEqual([]);
    expect(uncovered([getUnder], [missing], names)).toEqual([
      's3:ListBucket on arn:aws:s3:::mirror (GET mirror/p/watermark.json → 404 (a missing key answers 404 only with ListBucket))',
    ]);
    const conditioned = {
      Effect: 'Allow',
      Action: 's3:ListBucket',
      Resource: bucketArn,
      Condition: { StringLike: { 's3:prefix': ['p/*'] } },
    };
    expect(uncovered([getUnder, conditioned], [missing], names)).toHaveLength(1);
    expect(
      uncovered([getUnder, { Effect: 'Allow', Action: 's3:ListBucket', Resource: bucketArn }], [missing], names),
    ).toEqual([]);
    // That conditioned statement does allow a listing under its prefix, and not elsewhere.
    expect(
      uncovered(
        [conditioned],
        [{ service: 's3', method: 'GET', bucket: 'mirror', listPrefix: 'p/commits/', status: 200 }],
        names,
      ),
    ).toEqual([]);
    expect(
      uncovered(
        [conditioned],
        [{ service: 's3', method: 'GET', bucket: 'mirror', listPrefix: 'q/', status: 200 }],
        names,
      ),
    ).toHaveLength(1);
  });

  it('matches actions and ARNs with * and ?, exact keys exactly, and not another bucket', () => {
    const exact = { Effect: 'Allow', Action: ['s3:PutObject', 's3:GetObject'], Resource: objects('p/watermark.json') };
    expect(uncovered([exact], [found], names)).toEqual([]);
    expect(uncovered([exact], [{ ...found, key: 'p/watermark.jsonx' }], names)).toHaveLength(1);
    expect(uncovered([{ ...exact, Resource: objects('p/watermark.???n') }], [found], names)).toEqual([]);
    expect(uncovered([{ ...exact, Action: 's3:Get*' }], [found], names)).toEqual([]);
    expect(uncovered([{ ...exact, Action: 's3:Put*' }], [found], names)).toHaveLength(1);
    expect(uncovered([getUnder], [{ ...found, bucket: 'other' }], names)).toHaveLength(1);
    expect(uncovered([{ ...getUnder, Effect: 'Deny' }], [found], names)).toHaveLength(1);
  });

  it('holds a DynamoDB call to the table and its partition keys (ForAllValues: every key listed)', () => {
    const statement = {
      Effect: 'Allow',
      Action: ['dynamodb:GetItem', 'dynamodb:Query'],
      Resource: { 'Fn::GetAtt': ['T', 'Arn'] },
      Condition: { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': ['a', 'b'] } },
    };
    const call = (partitionKeys: string[], operation = 'GetItem'): RecordedCall => ({
      service: 'dynamodb',
      operation,
      table: 'cursors',
      partitionKeys,
      status: 200,
    });
    expect(uncovered([statement], [call(['a']), call(['b'], 'Query')], names)).toEqual([]);
    expect(uncovered([statement], [call(['c'])], names)).toHaveLength(1);
    expect(uncovered([statement], [call(['a'], 'PutItem')], names)).toHaveLength(1);
    expect(uncovered([statement], [{ ...call(['a']), table: 'other' } as RecordedCall], names)).toHaveLength(1);
    expect(requiredPermissions(call(['a']), names)[0]!.resource).toBe(
      `arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/cursors`,
    );
  });

  it('refuses what it does not model rather than passing it', () => {
    expect(() =>
      allows(
        [
          {
            Effect: 'Allow',
            Action: 's3:GetObject',
            Resource: '*',
            Condition: { IpAddress: { 'aws:SourceIp': '10.0.0.0/8' } },
          },
        ],
        requiredPermissions(found, names)[0]!,
        names,
      ),
    ).toThrow(/IpAddress/);
    expect(() =>
      allows(
        [{ Effect: 'Allow', NotAction: 's3:PutObject', Resource: '*' }],
        requiredPermissions(found, names)[0]!,
        names,
      ),
    ).toThrow(/NotAction/);
  });
});
