/**
 * The CDK side of a private feed's credentials: they live in a Secrets Manager secret, and the template holds
 * only its ARN (the function's `SOURCE_SECRET_ARN`) and a grant to read that one secret. A source URL that
 * embeds credentials is refused at synth: they would be in plain text in the template, in `cdk.out` and in the
 * function's configuration (its environment and description, as `ListFunctions` shows them).
 */
import { ArnFormat, Stack, Token } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import type { Construct } from 'constructs';
import { redactUrl } from '../lambda/contract/index.js';

/** A complete secret ARN ends with '-' and the six characters Secrets Manager appends to the name. */
const COMPLETE_ARN = /^arn:[^:]+:secretsmanager:[^:]*:[^:]*:secret:.+-[A-Za-z0-9]{6}$/;

/**
 * The secret given to a CatalogSync: an `ISecret` (its own `encryptionKey`, if any, is the customer key), or a
 * secret's complete ARN, partial ARN or name (in the stack's account and region) with the ARN of its customer
 * key, if it has one.
 */
export function sourceSecretOf(
  scope: Construct,
  id: string,
  secret: secretsmanager.ISecret | string,
  keyArn?: string,
): secretsmanager.ISecret {
  if (typeof secret !== 'string') return secret;
  const encryptionKey = keyArn === undefined ? undefined : kms.Key.fromKeyArn(scope, `${id}Key`, keyArn);
  const key = encryptionKey ? { encryptionKey } : {};
  if (COMPLETE_ARN.test(secret))
    return secretsmanager.Secret.fromSecretAttributes(scope, id, { secretCompleteArn: secret, ...key });
  const secretPartialArn = secret.startsWith('arn:')
    ? secret
    : Stack.of(scope).formatArn({
        service: 'secretsmanager',
        resource: 'secret',
        resourceName: secret,
        arnFormat: ArnFormat.COLON_RESOURCE_NAME,
      });
  return secretsmanager.Secret.fromSecretAttributes(scope, id, { secretPartialArn, ...key });
}

/**
 * Lets `role` read `secret` and nothing else: `GetSecretValue` (the only call the function makes, no
 * `DescribeSecret`), and `kms:Decrypt` of its customer key through Secrets Manager only. A secret known by
 * name or partial ARN is matched with the six characters Secrets Manager appends (`-??????`), as AWS advises.
 * Returns the resource ARN granted.
 */
export function grantSourceSecretRead(role: iam.IRole, secret: secretsmanager.ISecret): string {
  const resource = secret.secretFullArn ?? `${secret.secretArn}-??????`;
  role.addToPrincipalPolicy(
    new iam.PolicyStatement({
      sid: 'ReadSourceSecret',
      actions: ['secretsmanager:GetSecretValue'],
      resources: [resource],
    }),
  );
  if (secret.encryptionKey) {
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        sid: 'DecryptSourceSecret',
        actions: ['kms:Decrypt'],
        resources: [secret.encryptionKey.keyArn],
        conditions: { StringEquals: { 'kms:ViaService': `secretsmanager.${Stack.of(role).region}.amazonaws.com` } },
      }),
    );
  }
  return resource;
}

/**
 * A message when `source` (`CATALOG_SOURCE`) embeds credentials (`https://user:token@host/…`), else undefined.
 * It quotes the URL without them.
 */
export function embeddedCredentialsProblem(source: string): string | undefined {
  if (Token.isUnresolved(source)) return undefined;
  let url: URL;
  try {
    url = new URL(source);
  } catch {
    return undefined; // not a URL: the engine's own check says so
  }
  if (!url.username && !url.password) return undefined;
  return (
    `source (CATALOG_SOURCE) ${JSON.stringify(redactUrl(source))} embeds credentials, which would be in plain text in the template, ` +
    'cdk.out and the function\'s configuration: store them in a Secrets Manager secret ({"username": "…", "password": "…"} or a bare token) ' +
    'and pass it as sourceSecret (context key catalog-sync:sourceSecret: its name or ARN)'
  );
}
