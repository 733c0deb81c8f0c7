/**
 * A small IAM evaluator, written for the tests and sharing nothing with infra/: does a role's identity policy
 * (the synthesized CloudFormation statements) allow a request recorded by testkit/aws-request-recorder.ts?
 *
 * What it models, after the IAM and S3 user guides:
 * - Allow statements only (no explicit Deny in the roles under test; `NotAction`/`NotResource` are refused);
 * - actions matched case-insensitively with `*` and `?` wildcards, resources (ARNs) case-sensitively with both;
 * - conditions `StringEquals`, `StringLike`, `ForAllValues:StringEquals` and `ForAllValues:StringLike` on the
 *   request's `s3:prefix` and `dynamodb:LeadingKeys` (an unknown operator or key is an error, never a pass). A
 *   single-valued operator on a key the request lacks is false; `ForAllValues` on an absent key is true;
 * - the request → action map: GET/HEAD of a key is `s3:GetObject`, PUT `s3:PutObject`, DELETE `s3:DeleteObject`, a
 *   GET of the bucket `s3:ListBucket` (with `s3:prefix` when the listing has one); a DynamoDB operation is
 *   `dynamodb:<operation>` on the table with `dynamodb:LeadingKeys` = its partition keys;
 * - S3's rule for a missing key: a GetObject/HeadObject answered 404 needs `s3:ListBucket` on the bucket too
 *   (without it S3 answers 403 AccessDenied), and that request has no `s3:prefix`, so a ListBucket statement
 *   conditioned on `s3:prefix` does not count.
 */
import type { RecordedCall } from './aws-request-recorder.js';

/** What the CloudFormation intrinsics of a template resolve to: the names a test used for its table and bucket. */
export interface TemplateNames {
  readonly region: string;
  readonly account: string;
  /** Logical id of the table → its name. */
  readonly tables: Readonly<Record<string, string>>;
  /** Logical id of the bucket → its name. */
  readonly buckets: Readonly<Record<string, string>>;
}

type Json = Record<string, any>;

/** One thing IAM checks for a request: an action on a resource, with the request's condition keys. */
export interface RequiredPermission {
  readonly action: string;
  readonly resource: string;
  readonly context: Readonly<Record<string, readonly string[]>>;
  /** The request it stands for, for messages. */
  readonly why: string;
}

/** The permissions a recorded request needs on AWS. */
export function requiredPermissions(
  call: RecordedCall,
  names: Pick<TemplateNames, 'region' | 'account'>,
): RequiredPermission[] {
  if (call.service === 'dynamodb') {
    return [
      {
        action: `dynamodb:${call.operation}`,
        resource: `arn:aws:dynamodb:${names.region}:${names.account}:table/${call.table}`,
        context: { 'dynamodb:LeadingKeys': call.partitionKeys },
        why: `${call.operation} ${call.table} pk=${call.partitionKeys.join(',')}`,
      },
    ];
  }
  const bucketArn = `arn:aws:s3:::${call.bucket}`;
  if (call.key === undefined) {
    if (call.method !== 'GET' && call.method !== 'HEAD')
      throw new Error(`S3 ${call.method} on bucket ${call.bucket}: no action known for it`);
    const context: Record<string, readonly string[]> =
      call.listPrefix === undefined ? {} : { 's3:prefix': [call.listPrefix] };
    return [
      {
        action: 's3:ListBucket',
        resource: bucketArn,
        context,
        why: `LIST ${call.bucket} prefix=${call.listPrefix ?? '(none)'} → ${call.status}`,
      },
    ];
  }
  const why = `${call.method} ${call.bucket}/${call.key} → ${call.status}`;
  const objectArn = `${bucketArn}/${call.key}`;
  switch (call.method) {
    case 'GET':
    case 'HEAD': {
      const needed: RequiredPermission[] = [{ action: 's3:GetObject', resource: objectArn, context: {}, why }];
      // S3 tells "no such key" (404) only to a caller who may list the bucket; anyone else gets 403.
      if (call.status === 404)
        needed.push({
          action: 's3:ListBucket',
          resource: bucketArn,
          context: {},
          why: `${why} (a missing key answers 404 only with ListBucket)`,
        });
      return needed;
    }
    case 'PUT':
      return [{ action: 's3:PutObject', resource: objectArn, context: {}, why }];
    case 'DELETE':
      return [{ action: 's3:DeleteObject', resource: objectArn, context: {}, why }];
    default:
      throw new Error(`S3 ${call.method} of ${call.bucket}/${call.key}: no action known for it`);
  }
}

/** Whether one of `statements` allows `permission`. */
export function allows(statements: readonly Json[], permission: RequiredPermission, names: TemplateNames): boolean {
  return statements.some((statement) => {
    if (
      statement.NotAction !== undefined ||
      statement.NotResource !== undefined ||
      statement.NotPrincipal !== undefined
    ) {
      throw new Error(`statement ${JSON.stringify(statement)}: NotAction/NotResource/NotPrincipal are not modelled`);
    }
    if (statement.Effect !== 'Allow') return false;
    if (
      !list(statement.Action).some((action) => globMatch(String(action).toLowerCase(), permission.action.toLowerCase()))
    )
      return false;
    if (!list(statement.Resource).some((resource) => globMatch(resolve(resource, names), permission.resource)))
      return false;
    return conditionHolds(statement.Condition as Json | undefined, permission.context, names);
  });
}

/** The permissions of `calls` that `statements` do not allow, as messages (empty: every call is covered). */
export function uncovered(statements: readonly Json[], calls: readonly RecordedCall[], names: TemplateNames): string[] {
  const missing = new Set<string>();
  for (const call of calls) {
    for (const permission of requiredPermissions(call, names)) {
      if (!allows(statements, permission, names))
        missing.add(
          `${permission.action} on ${permission.resource}${contextText(permission.context)} (${permission.why})`,
        );
    }
  }
  return [...missing];
}

const SINGLE_VALUED = {
  StringEquals: (pattern: string, value: string) => pattern === value,
  StringLike: globMatch,
} as const;
const KNOWN_KEYS = new Set(['s3:prefix', 'dynamodb:LeadingKeys']);

function conditionHolds(
  condition: Json | undefined,
  context: Readonly<Record<string, readonly string[]>>,
  names: TemplateNames,
): boolean {
  if (condition === undefined) return true;
  return Object.entries(condition).every(([operator, block]) => {
    const forAll = operator.startsWith('ForAllValues:');
    const base = forAll ? operator.slice('ForAllValues:'.length) : operator;
    const test = (SINGLE_VALUED as Record<string, ((pattern: string, value: string) => boolean) | undefined>)[base];
    if (test === undefined) throw new Error(`condition operator ${operator} is not modelled`);
    return Object.entries(block as Json).every(([key, expected]) => {
      if (!KNOWN_KEYS.has(key)) throw new Error(`condition key ${key} is not modelled`);
      // A value may be an intrinsic (a consumer's key names its bucket): as deployed.
      const patterns = list(expected).map((value) => resolve(value, names));
      const values = context[key];
      const matches = (value: string) => patterns.some((pattern) => test(pattern, value));
      if (forAll) return (values ?? []).every(matches);
      return values !== undefined && values.length > 0 && values.some(matches);
    });
  });
}

/** A CloudFormation value (string, `Fn::Join`, `Fn::GetAtt`, `Ref`) as the deployed string; unknown parts stay visibly unresolved. */
export function resolve(value: unknown, names: TemplateNames): string {
  if (typeof value === 'string') return value;
  const object = value as Json;
  if (object?.['Fn::Join']) {
    const [separator, parts] = object['Fn::Join'] as [string, unknown[]];
    return parts.map((part) => resolve(part, names)).join(separator);
  }
  if (object?.['Fn::GetAtt']) {
    const [id, attribute] = object['Fn::GetAtt'] as [string, string];
    if (attribute === 'Arn' && names.tables[id] !== undefined)
      return `arn:aws:dynamodb:${names.region}:${names.account}:table/${names.tables[id]}`;
    if (attribute === 'Arn' && names.buckets[id] !== undefined) return `arn:aws:s3:::${names.buckets[id]}`;
    return `<unresolved ${id}.${attribute}>`;
  }
  if (typeof object?.Ref === 'string') {
    const ref = object.Ref as string;
    if (ref === 'AWS::Partition') return 'aws';
    if (ref === 'AWS::Region') return names.region;
    if (ref === 'AWS::AccountId') return names.account;
    if (ref === 'AWS::URLSuffix') return 'amazonaws.com';
    return names.tables[ref] ?? names.buckets[ref] ?? `<unresolved Ref ${ref}>`;
  }
  return `<unresolved ${JSON.stringify(value)}>`;
}

/** IAM's wildcard match: `*` any run of characters (`/` included), `?` exactly one. */
export function globMatch(pattern: string, value: string): boolean {
  const source = pattern
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${source}$`, 's').test(value);
}

function list(value: unknown): unknown[] {
  return value === undefined ? [] : Array.isArray(value) ? value : [value];
}

function contextText(context: Readonly<Record<string, readonly string[]>>): string {
  const entries = Object.entries(context);
  return entries.length === 0 ? '' : ` with ${entries.map(([key, values]) => `${key}=${values.join(',')}`).join(' ')}`;
}
