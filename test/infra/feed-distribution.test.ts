/**
 * The feed served on AWS (`-c catalog-sync:feed=true`): CloudFront with an origin access control in front of the
 * mirror bucket's `feed/` only, the bucket's policy letting only this distribution read that prefix (and list, so a
 * missing key is S3's 404, not its 403), packages cached for a year and indexes for a minute, HTTPS only, the base URL
 * as an output, and no cdk-nag finding left unanswered. One synthesis of the app as `cdk synth` builds it.
 */
import { App } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { appConfigFromContext } from '../../infra/config.js';
import {
  acknowledgements,
  CDK_JSON,
  asArray,
  getAtt,
  type Json,
  only,
  rawFindings,
  ref,
  statements,
  synth,
} from './synth-kit.js';

const s = synth({ 'catalog-sync:feed': true });
const [distributionId, distribution] = only(s.resources, 'AWS::CloudFront::Distribution');
const config = distribution.DistributionConfig as Json;
const [bucketId] = only(s.resources, 'AWS::S3::Bucket', (p) => p.VersioningConfiguration !== undefined);
const distributionArn = {
  'Fn::Join': [
    '',
    ['arn:', ref('AWS::Partition'), ':cloudfront::', ref('AWS::AccountId'), ':distribution/', ref(distributionId)],
  ],
};
/** A cache policy's config, by the behaviour that uses it. */
const cachePolicyOf = (behaviour: Json): Json => s.resources[behaviour.CachePolicyId.Ref]!.Properties.CachePolicyConfig;
const cacheControlOf = (behaviour: Json): Json[] =>
  s.resources[behaviour.ResponseHeadersPolicyId.Ref]!.Properties.ResponseHeadersPolicyConfig.CustomHeadersConfig.Items;

describe('the feed distribution', () => {
  it('reaches the bucket through an origin access control that signs every request, under feed/ only', () => {
    const [accessId, access] = only(s.resources, 'AWS::CloudFront::OriginAccessControl');
    expect(access.OriginAccessControlConfig).toMatchObject({
      OriginAccessControlOriginType: 's3',
      SigningBehavior: 'always',
      SigningProtocol: 'sigv4',
    });
    expect(config.Origins).toEqual([
      {
        Id: expect.any(String),
        DomainName: getAtt(bucketId, 'RegionalDomainName'),
        OriginPath: '/feed',
        OriginAccessControlId: getAtt(accessId, 'Id'),
        S3OriginConfig: { OriginAccessIdentity: '' },
      },
    ]);
  });

  it("lets only this distribution read the bucket: GetObject under feed/, ListBucket so that a missing key is S3's 404", () => {
    const cloudFront = statements(s.resources).filter(
      ({ statement }) =>
        JSON.stringify(statement.Principal) === JSON.stringify({ Service: 'cloudfront.amazonaws.com' }),
    );
    const condition = { StringEquals: { 'AWS:SourceArn': distributionArn } };
    expect(cloudFront.map(({ statement }) => statement)).toEqual([
      {
        Effect: 'Allow',
        Principal: { Service: 'cloudfront.amazonaws.com' },
        Action: 's3:GetObject',
        Resource: { 'Fn::Join': ['', [getAtt(bucketId), '/feed/*']] },
        Condition: condition,
      },
      {
        Effect: 'Allow',
        Principal: { Service: 'cloudfront.amazonaws.com' },
        Action: 's3:ListBucket',
        Resource: getAtt(bucketId),
        Condition: condition,
      },
    ]);
    // In the snapshot bucket's own policy, nowhere else.
    const [policyId] = only(
      s.resources,
      'AWS::S3::BucketPolicy',
      (p) => JSON.stringify(p.Bucket) === JSON.stringify(ref(bucketId)),
    );
    expect(cloudFront.map(({ where }) => where)).toEqual([policyId, policyId]);
  });

  it('maps no status: a 404 is cached 10 s, a 403 (a real denial) and every 5xx pass as the origin gave them', () => {
    expect(config.CustomErrorResponses).toEqual([{ ErrorCode: 404, ErrorCachingMinTTL: 10 }]);
  });

  it('caches indexes 60 s (compressed) and packages a year, with the Cache-Control clients see, keying on nothing', () => {
    const indexes = config.DefaultCacheBehavior as Json;
    const [packages, ...others] = asArray(config.CacheBehaviors as Json[]);
    expect(others).toEqual([]);
    expect(packages!.PathPattern).toBe('*.nupkg');
    for (const behaviour of [indexes, packages!]) {
      expect(behaviour).toMatchObject({
        ViewerProtocolPolicy: 'https-only',
        AllowedMethods: ['GET', 'HEAD'],
        CachedMethods: ['GET', 'HEAD'],
        TargetOriginId: config.Origins[0].Id,
      });
      expect(cachePolicyOf(behaviour).ParametersInCacheKeyAndForwardedToOrigin).toMatchObject({
        QueryStringsConfig: { QueryStringBehavior: 'none' },
        HeadersConfig: { HeaderBehavior: 'none' },
        CookiesConfig: { CookieBehavior: 'none' },
      });
    }
    expect(indexes.Compress).toBe(true);
    expect(cachePolicyOf(indexes)).toMatchObject({ MinTTL: 0, DefaultTTL: 60, MaxTTL: 60 });
    expect(cachePolicyOf(indexes).ParametersInCacheKeyAndForwardedToOrigin).toMatchObject({
      EnableAcceptEncodingGzip: true,
      EnableAcceptEncodingBrotli: true,
    });
    expect(cacheControlOf(indexes)).toEqual([
      { Header: 'Cache-Control', Value: 'public, max-age=60', Override: false },
    ]);
    expect(packages!.Compress).toBe(false);
    expect(cachePolicyOf(packages!)).toMatchObject({ MinTTL: 0, DefaultTTL: 31_536_000, MaxTTL: 31_536_000 });
    expect(cacheControlOf(packages!)).toEqual([
      { Header: 'Cache-Control', Value: 'public, max-age=31536000, immutable', Override: false },
    ]);
  });

  it('serves HTTPS only, keeps access logs in a bucket of their own, and gives its base URL as an output', () => {
    expect(config).toMatchObject({ Enabled: true, HttpVersion: 'http2and3', PriceClass: 'PriceClass_100' });
    const [logsId, logs] = only(
      s.resources,
      'AWS::S3::Bucket',
      (p) => p.OwnershipControls?.Rules?.[0]?.ObjectOwnership === 'BucketOwnerPreferred',
    );
    expect(config.Logging).toEqual({ Bucket: getAtt(logsId, 'RegionalDomainName'), Prefix: 'feed/' });
    expect(logs.LifecycleConfiguration.Rules).toEqual([{ ExpirationInDays: 90, Status: 'Enabled' }]);
    const outputs = s.template.toJSON().Outputs as Json;
    expect(outputs.FeedBaseUrl.Value).toEqual({
      'Fn::Join': ['', ['https://', getAtt(distributionId, 'DomainName'), '/']],
    });
    expect(outputs.FeedDistributionId.Value).toEqual(ref(distributionId));
  });

  it('answers every cdk-nag finding of the feed, each acknowledgement one that fires, with its reason', () => {
    const feed = s.stack.sync.feed!.distribution!;
    expect(new AwsSolutionsChecks().validateScope(feed).violations.map((v) => v.ruleName)).toEqual([]);
    const findings = new Set(rawFindings(feed));
    const acknowledged = acknowledgements(feed);
    expect([...acknowledged.keys()].sort()).toEqual([
      'AwsSolutions-CFR1',
      'AwsSolutions-CFR2',
      'AwsSolutions-CFR4',
      'AwsSolutions-S1',
    ]);
    for (const [id, reason] of acknowledged) {
      expect(findings, id).toContain(id);
      expect(reason.length, id).toBeGreaterThan(40);
    }
  });

  it('is off by default, on with -c catalog-sync:feed=true (read without another synthesis)', () => {
    const config = (context: Json) =>
      appConfigFromContext(new App({ context: { ...CDK_JSON.context, ...context } }).node);
    expect(CDK_JSON.context['catalog-sync:feed']).toBe(false);
    expect(config({}).first.feed).toBe(undefined);
    expect(config({ 'catalog-sync:feed': 'true' }).first.feed).toEqual({});
    expect(() => config({ 'catalog-sync:feed': 'maybe' })).toThrow('catalog-sync:feed: "maybe" must be true or false');
  });
});
