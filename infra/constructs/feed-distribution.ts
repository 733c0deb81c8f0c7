/**
 * `FeedDistribution`: the mirror's private NuGet feed (`{prefix}feed/`, docs/contract.md "The feed") served over HTTPS
 * by CloudFront, and nothing else of the bucket.
 *
 * - The origin is the bucket with the origin path `/{prefix}feed`, reached through an origin access control (SigV4 on
 *   every request): the bucket stays private. The bucket's policy lets this distribution (`AWS:SourceArn`) read
 *   `{prefix}feed/*` and nothing else, and list the bucket, so that S3 answers a missing key with 404 rather than 403:
 *   NuGet clients fail a restore after six tries on a 403, and take a 404 as "not here". (A CloudFront Function cannot
 *   turn the 403 into a 404: CloudFront runs no viewer-response function on an origin's 4xx; an error response would
 *   need an error page object, and would also hide a real denial, a key policy gone wrong, as "not found".) The list
 *   permission shows no listing to anyone: every request of the distribution is an object's path under the origin
 *   path, never the bucket's root, and no query string is forwarded. Real 5xx pass unchanged.
 * - Packages (`*.nupkg`) are cached at the edge for a year (`immutable` for clients: a version's bytes never change
 *   under its key); every other object (the indexes) for {@link DEFAULT_INDEX_TTL} at most, so a new version reaches
 *   clients at most that long after its index is written. A 404 is cached {@link MISSING_TTL}, so a brand-new package
 *   id appears as fast. Indexes are compressed (gzip, Brotli) for clients that accept it.
 * - HTTPS only (HTTP/2 and 3), GET and HEAD only; with `domainNames` and a `certificate`, TLS 1.2 at least.
 * - Access logs (CloudFront standard logs) to a bucket of their own, kept 90 days, unless `accessLogs` is false.
 * - With a bucket encrypted by a customer key, the key's policy lets CloudFront decrypt for distributions of this
 *   account (a wildcard: naming this distribution would make the key, the bucket and the distribution depend on each
 *   other in a circle).
 *
 * Its `baseUrl` is the feed's base URL: the feed's documents must be written with it (their URLs are absolute).
 */
import { Annotations, Aws, Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import type * as acm from 'aws-cdk-lib/aws-certificatemanager';
import * as cloudfront from 'aws-cdk-lib/aws-cloudfront';
import * as origins from 'aws-cdk-lib/aws-cloudfront-origins';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { CatalogSyncPropsError } from '../props-error.js';

/** How long the edge keeps an index by default: a new version reaches clients within this after it is written. */
export const DEFAULT_INDEX_TTL = Duration.seconds(60);
/** How long the edge keeps a package: a version's bytes under its key never change. */
export const PACKAGE_TTL = Duration.days(365);
/** How long the edge keeps a 404 (CloudFront's default, said here so that the bound is in the code). */
export const MISSING_TTL = Duration.seconds(10);

/** What a {@link FeedDistribution} serves and how; everything but the bucket has a default. */
export interface FeedDistributionOptions {
  /**
   * Custom domain names of the feed (`nuget.example.com`); the first one is in `baseUrl`. Needs `certificate`.
   * @default - the distribution's own `*.cloudfront.net` name
   */
  readonly domainNames?: readonly string[];
  /**
   * The certificate of `domainNames`, from ACM in us-east-1 (CloudFront's region for certificates).
   * @default - none: the `*.cloudfront.net` certificate
   */
  readonly certificate?: acm.ICertificate;
  /**
   * How long the edge keeps an index (every object but the packages) at most: the bound on how late a new version,
   * an unlist or a delete reaches clients after the feed writes it. From 1 second to 1 hour.
   * @default 60 seconds
   */
  readonly indexTtl?: Duration;
  /**
   * Where CloudFront's edge locations serve from: the cheapest class serves North America, Europe and Israel from
   * there, and the rest of the world from those.
   * @default cloudfront.PriceClass.PRICE_CLASS_100
   */
  readonly priceClass?: cloudfront.PriceClass;
  /**
   * Whether to keep CloudFront's access logs (each request: time, client, path, status, bytes) in a bucket created
   * for them. Delivery is free; the bucket's storage is not.
   * @default true
   */
  readonly accessLogs?: boolean;
  /**
   * How long the access logs are kept.
   * @default Duration.days(90)
   */
  readonly accessLogsRetention?: Duration;
  /**
   * An AWS WAF web ACL (scope CLOUDFRONT) in front of the feed, by ARN: rate limits or an IP allow list.
   * @default - none
   */
  readonly webAclArn?: string;
}

/** Properties of a {@link FeedDistribution}. */
export interface FeedDistributionProps extends FeedDistributionOptions {
  /** The mirror's bucket (the feed's objects are under `{prefix}feed/`). */
  readonly bucket: s3.IBucket;
  /**
   * The mirror's key prefix.
   * @default ''
   */
  readonly prefix?: string;
}

/** The folder of the mirror that holds the feed, under its prefix: what the distribution serves. */
const FEED_FOLDER = 'feed';
/** The path pattern of the packages' cache behaviour. */
export const PACKAGE_PATH_PATTERN = '*.nupkg';

/** CloudFront in front of a mirror's feed. See the module documentation. */
export class FeedDistribution extends Construct {
  readonly distribution: cloudfront.Distribution;
  /** The feed's base URL (`https://d111111abcdef8.cloudfront.net/`): give it to the feed writer. */
  readonly baseUrl: string;
  /** The service index's URL, what NuGet clients are given (`{baseUrl}index.json`). */
  readonly serviceIndexUrl: string;
  /** The bucket of the access logs, when they are kept. */
  readonly accessLogsBucket?: s3.Bucket;

  constructor(scope: Construct, id: string, props: FeedDistributionProps) {
    super(scope, id);
    const prefix = props.prefix ?? '';
    const indexTtl = props.indexTtl ?? DEFAULT_INDEX_TTL;
    // At least a second: CloudFront compresses only what a cache policy with a TTL may keep.
    if (!indexTtl.isUnresolved() && (indexTtl.toSeconds() < 1 || indexTtl.toSeconds() > 3600))
      throw new CatalogSyncPropsError(
        `${this.node.path}: indexTtl must be from 1 second to 1 hour (got ${indexTtl.toHumanString()})`,
      );
    if ((props.domainNames?.length ?? 0) > 0 !== (props.certificate !== undefined))
      throw new CatalogSyncPropsError(
        `${this.node.path}: domainNames and certificate go together (a custom name needs its certificate)`,
      );

    const access = new cloudfront.S3OriginAccessControl(this, 'OriginAccess', {
      description: `catalog-sync feed of ${prefix}${FEED_FOLDER}/`,
      signing: cloudfront.Signing.SIGV4_ALWAYS,
    });
    // Not S3BucketOrigin.withOriginAccessControl: it would let the distribution read the whole bucket.
    const origin = origins.S3BucketOrigin.withBucketDefaults(props.bucket, {
      originPath: `/${prefix}${FEED_FOLDER}`,
      originAccessControlId: access.originAccessControlId,
    });
    const indexes = behaviour(this, 'Index', {
      ttl: indexTtl,
      cacheControl: `public, max-age=${indexTtl.toSeconds()}`,
      compress: true,
    });
    const packages = behaviour(this, 'Package', {
      ttl: PACKAGE_TTL,
      cacheControl: `public, max-age=${PACKAGE_TTL.toSeconds()}, immutable`,
      compress: false,
    });
    if (props.accessLogs ?? true) this.accessLogsBucket = this.createLogsBucket(props.accessLogsRetention);
    this.distribution = new cloudfront.Distribution(this, 'Distribution', {
      // At most 128 characters (CloudFront's limit): a prefix has at most 64 bytes.
      comment: `catalog-sync feed: ${prefix}${FEED_FOLDER}/`,
      defaultBehavior: { origin, ...indexes },
      additionalBehaviors: { [PACKAGE_PATH_PATTERN]: { origin, ...packages } },
      errorResponses: [{ httpStatus: 404, ttl: MISSING_TTL }],
      httpVersion: cloudfront.HttpVersion.HTTP2_AND_3,
      priceClass: props.priceClass ?? cloudfront.PriceClass.PRICE_CLASS_100,
      ...(props.certificate
        ? {
            certificate: props.certificate,
            domainNames: [...(props.domainNames ?? [])],
            minimumProtocolVersion: cloudfront.SecurityPolicyProtocol.TLS_V1_2_2021,
          }
        : {}),
      ...(this.accessLogsBucket
        ? { enableLogging: true, logBucket: this.accessLogsBucket, logFilePrefix: 'feed/' }
        : {}),
      ...(props.webAclArn === undefined ? {} : { webAclId: props.webAclArn }),
    });
    this.grantReads(props.bucket, prefix);
    const host = props.domainNames?.[0] ?? this.distribution.distributionDomainName;
    this.baseUrl = `https://${host}/`;
    this.serviceIndexUrl = `${this.baseUrl}index.json`;
    this.acknowledge(props);
  }

  /**
   * The bucket's policy: this distribution (and no other) may read the feed's objects and list the bucket (a missing
   * key is then a 404). An imported bucket's policy cannot be changed here: a warning says what to add.
   */
  private grantReads(bucket: s3.IBucket, prefix: string): void {
    const cloudFront = new iam.ServicePrincipal('cloudfront.amazonaws.com');
    const thisDistribution = { StringEquals: { 'AWS:SourceArn': this.distribution.distributionArn } };
    const added = [
      new iam.PolicyStatement({
        principals: [cloudFront],
        actions: ['s3:GetObject'],
        resources: [bucket.arnForObjects(`${prefix}${FEED_FOLDER}/*`)],
        conditions: thisDistribution,
      }),
      new iam.PolicyStatement({
        principals: [cloudFront],
        actions: ['s3:ListBucket'],
        resources: [bucket.bucketArn],
        conditions: thisDistribution,
      }),
    ].map((statement) => bucket.addToResourcePolicy(statement).statementAdded);
    if (added.includes(false))
      Annotations.of(this).addWarningV2(
        'catalog-sync:feedImportedBucket',
        `The policy of the imported bucket cannot be changed here: allow cloudfront.amazonaws.com s3:GetObject on ${prefix}${FEED_FOLDER}/* and s3:ListBucket on the bucket, with AWS:SourceArn the distribution's ARN (docs/deploy.md)`,
      );
    const key = bucket.encryptionKey;
    if (key === undefined) return;
    const decrypt = key.addToResourcePolicy(
      new iam.PolicyStatement({
        principals: [cloudFront],
        actions: ['kms:Decrypt'],
        resources: ['*'],
        conditions: {
          StringEquals: { 'AWS:SourceAccount': Aws.ACCOUNT_ID },
          ArnLike: { 'AWS:SourceArn': `arn:${Aws.PARTITION}:cloudfront::${Aws.ACCOUNT_ID}:distribution/*` },
        },
      }),
    );
    if (!decrypt.statementAdded)
      Annotations.of(this).addWarningV2(
        'catalog-sync:feedImportedKey',
        "The policy of the bucket's imported key cannot be changed here: allow cloudfront.amazonaws.com kms:Decrypt with AWS:SourceArn the distribution's ARN (docs/deploy.md)",
      );
  }

  private createLogsBucket(retention: Duration | undefined): s3.Bucket {
    const bucket = new s3.Bucket(this, 'AccessLogs', {
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      encryption: s3.BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      minimumTLSVersion: 1.2,
      // CloudFront's standard logs are delivered under an ACL grant: ACLs stay enabled, the bucket owner owning.
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_PREFERRED,
      lifecycleRules: [{ expiration: retention ?? Duration.days(90) }],
      removalPolicy: RemovalPolicy.RETAIN,
    });
    Validations.of(bucket).acknowledge({
      id: 'AwsSolutions-S1',
      reason:
        "It holds the feed distribution's access logs; a log of the reads of those logs would be a third bucket (CloudTrail data events record them if needed).",
    });
    return bucket;
  }

  /** cdk-nag's findings this distribution answers by design, each with its reason. */
  private acknowledge(props: FeedDistributionProps): void {
    const on = Validations.of(this.distribution);
    on.acknowledge({
      id: 'AwsSolutions-CFR1',
      reason:
        'A package feed is read from wherever its clients build; restrict countries with a WAF web ACL (webAclArn) if needed.',
    });
    if (props.webAclArn === undefined)
      on.acknowledge({
        id: 'AwsSolutions-CFR2',
        reason:
          "Serves static, public-to-its-clients files with GET and HEAD only, no compute behind it; a web ACL (webAclArn) costs a monthly fee and is the operator's choice.",
      });
    if (props.certificate === undefined)
      on.acknowledge({
        id: 'AwsSolutions-CFR4',
        reason:
          "The *.cloudfront.net certificate's security policy is CloudFront's (clients negotiate TLS 1.2 or 1.3); give domainNames and a certificate to require TLS 1.2.",
      });
    if (!this.accessLogsBucket)
      on.acknowledge({ id: 'AwsSolutions-CFR3', reason: 'Access logs turned off by the accessLogs prop.' });
  }
}

/** One cache behaviour's cache policy and response headers, for {@link FeedDistribution}. */
function behaviour(
  scope: Construct,
  name: 'Index' | 'Package',
  o: { ttl: Duration; cacheControl: string; compress: boolean },
): Omit<cloudfront.BehaviorOptions, 'origin'> {
  const cachePolicy = new cloudfront.CachePolicy(scope, `${name}CachePolicy`, {
    comment: `catalog-sync feed: ${name === 'Index' ? 'indexes' : 'packages'}`,
    // The edge keeps an object at most `ttl`, less if the object's own Cache-Control says so.
    minTtl: Duration.seconds(0),
    defaultTtl: o.ttl,
    maxTtl: o.ttl,
    queryStringBehavior: cloudfront.CacheQueryStringBehavior.none(),
    headerBehavior: cloudfront.CacheHeaderBehavior.none(),
    cookieBehavior: cloudfront.CacheCookieBehavior.none(),
    enableAcceptEncodingGzip: o.compress,
    enableAcceptEncodingBrotli: o.compress,
  });
  const responseHeadersPolicy = new cloudfront.ResponseHeadersPolicy(scope, `${name}Headers`, {
    comment: `catalog-sync feed: Cache-Control of the ${name === 'Index' ? 'indexes' : 'packages'}`,
    // The object's own Cache-Control, when the feed writer set one, wins.
    customHeadersBehavior: { customHeaders: [{ header: 'Cache-Control', value: o.cacheControl, override: false }] },
  });
  return {
    viewerProtocolPolicy: cloudfront.ViewerProtocolPolicy.HTTPS_ONLY,
    allowedMethods: cloudfront.AllowedMethods.ALLOW_GET_HEAD,
    cachedMethods: cloudfront.CachedMethods.CACHE_GET_HEAD,
    cachePolicy,
    responseHeadersPolicy,
    compress: o.compress,
  };
}
