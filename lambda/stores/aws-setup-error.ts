/**
 * The AWS set-up errors a new user meets first (no region, no credentials, an endpoint that is not there), as
 * settings errors that name the setting or endpoint and say what to do. The SDK's own messages (`Region is
 * missing`, `Could not load credentials from any providers`, `connect ECONNREFUSED 127.0.0.1:1`) name neither the
 * service nor the variable. The CLI exits 2 on them, as on any bad setting.
 */
import type { InitializeHandler, InitializeHandlerArguments, MetadataBearer, MiddlewareStack } from '@smithy/types';
import { SettingsError } from '../contract/settings.js';
import { untrustedCertificateAdvice, untrustedCertificateCode } from '../contract/tls-trust.js';

/** The services catalog-sync's AWS clients talk to, with the variable that overrides each endpoint. */
export const AWS_SERVICE = {
  dynamodb: { name: 'DynamoDB', endpointVariable: 'AWS_ENDPOINT_URL_DYNAMODB' },
  s3: { name: 'S3', endpointVariable: 'AWS_ENDPOINT_URL_S3' },
} as const;

/** One of {@link AWS_SERVICE}'s values. */
export type AwsService = (typeof AWS_SERVICE)[keyof typeof AWS_SERVICE];

/** Network failures that mean "nothing answers there", not a passing blip. */
const UNREACHABLE = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

/**
 * The settings error `error` stands for, when it is an AWS set-up problem of `service`; undefined otherwise (the
 * error is then the service's own, or a passing network failure, and is left as it is).
 */
export function awsSetupErrorOf(
  error: unknown,
  service: AwsService,
  env: NodeJS.ProcessEnv = process.env,
): SettingsError | undefined {
  if (!(error instanceof Error) || error instanceof SettingsError) return undefined;
  // An empty AWS_REGION is as good as none; the SDK says so in other words.
  if (error.message === 'Region is missing' || error.message.startsWith('Region not accepted: region=""')) {
    return new SettingsError(
      'AWS_REGION',
      `is not set, and ${service.name} needs a region: set AWS_REGION (e.g. us-east-1), or a profile with a region (AWS_PROFILE and ~/.aws/config)`,
      { cause: error },
    );
  }
  if (error.name === 'CredentialsProviderError' || /could not load credentials/i.test(error.message)) {
    return new SettingsError(
      'AWS credentials',
      `none found for ${service.name}: set AWS_PROFILE (after \`aws sso login\` for SSO), or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or run with a role (Lambda, ECS, EC2). For a local emulator any key pair will do`,
      { cause: error },
    );
  }
  const certificate = untrustedCertificateCode(error);
  if (certificate !== undefined) {
    const endpoint = env[service.endpointVariable];
    const named = endpoint !== undefined && endpoint !== '';
    return new SettingsError(
      named ? service.endpointVariable : `${service.name} endpoint`,
      untrustedCertificateAdvice(named ? JSON.stringify(endpoint) : `the ${service.name} endpoint`, certificate),
      { cause: error },
    );
  }
  const code = (error as NodeJS.ErrnoException).code ?? (error.cause as NodeJS.ErrnoException | undefined)?.code;
  if (code !== undefined && UNREACHABLE.has(code)) {
    const endpoint = env[service.endpointVariable];
    const detail = endpoint === undefined || endpoint === '' ? '' : ` ${JSON.stringify(endpoint)}`;
    const what =
      endpoint === undefined || endpoint === ''
        ? `the ${service.name} endpoint of the region could not be reached (${code}: ${error.message}): check the network, a proxy or AWS_REGION; for a local emulator set ${service.endpointVariable}`
        : `${detail.trim()} could not be reached (${code}: ${error.message}): start the ${service.name} server there, or correct ${service.endpointVariable}`;
    return new SettingsError(
      endpoint === undefined || endpoint === '' ? `${service.name} endpoint` : service.endpointVariable,
      what,
      { cause: error },
    );
  }
  return undefined;
}

/**
 * `request` (one of the lean S3 client's, which do not pass the S3 client's middleware), its failure on AWS set-up
 * (no region, no credentials) thrown as {@link awsSetupErrorOf}'s settings error, as the SDK's own calls throw it.
 */
export function withS3SetupErrors<T>(request: Promise<T>): Promise<T> {
  return request.catch((error: unknown) => {
    throw awsSetupErrorOf(error, AWS_SERVICE.s3) ?? error;
  });
}

/**
 * Makes every call through `client` fail with {@link awsSetupErrorOf}'s settings error when it fails on AWS set-up
 * (a middleware at the start of the stack: it sees region, credential and connection failures after the SDK's
 * retries). Returns `client`.
 */
// biome-ignore lint/suspicious/noExplicitAny: the SDK's middleware stack is generic over every command's input and output
export function withSetupErrors<C extends { readonly middlewareStack: MiddlewareStack<any, MetadataBearer> }>(
  client: C,
  service: AwsService,
  env: NodeJS.ProcessEnv = process.env,
): C {
  client.middlewareStack.add(
    // biome-ignore lint/suspicious/noExplicitAny: a middleware of every command, whatever its input
    (next: InitializeHandler<any, MetadataBearer>) => async (args: InitializeHandlerArguments<any>) => {
      try {
        return await next(args);
      } catch (error) {
        throw awsSetupErrorOf(error, service, env) ?? error;
      }
    },
    { step: 'initialize', name: 'catalogSyncSetupErrors' },
  );
  return client;
}
