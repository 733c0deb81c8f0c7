import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { withLeanPut } from './s3-put-wiring.js';
import { AWS_SERVICE, withSetupErrors } from './aws-setup-error.js';
import { sdkRequestHandler } from './proxy-agents.js';
import { readProxyEnv } from '../contract/index.js';

/**
 * AWS SDK clients configured from the environment, the same way for the Lambda and the CLI.
 * Endpoints come from the SDK's own `AWS_ENDPOINT_URL_DYNAMODB` / `AWS_ENDPOINT_URL_S3`; path-style S3
 * addressing from `S3_FORCE_PATH_STYLE=true`. The S3 socket pool is sized to the leaf concurrency so PUTs
 * never queue behind the SDK's default of 50 sockets. Leaf and manifest PUTs (S3SnapshotStore) take the lean path
 * (s3-put-client.ts) with a pool of 2 × `concurrency` + 2 connections (the leaves in flight, as many again for
 * manifests, which are written as commits complete, and for leaves past `STRAGGLER_MS` that gave their slot back)
 * and the same 5 attempts; the latest view's and the private feed's documents (reads with their ETag, conditional
 * and plain PUTs) and the consumers' reads share that pool; the rest uses the SDK.
 * Every request, the lean ones included, goes through the proxy `HTTPS_PROXY` / `HTTP_PROXY` name unless `NO_PROXY`
 * lists its host (proxy-agents.ts). `env` left undefined is the process's (the library's openers leave it so).
 */
export function awsClients(
  env: NodeJS.ProcessEnv = process.env,
  concurrency: number,
): { dynamo: DynamoDBClient; s3: S3Client } {
  const requestHandler = sdkRequestHandler(env, {
    sockets: Math.max(50, concurrency * 2),
    connectionTimeout: 10_000,
    requestTimeout: 60_000,
  });
  return {
    // A request timeout: the writes that checkpoint after a run's stop are not aborted by it, and the SDK's
    // default handler waits for ever on a server that never answers.
    dynamo: withSetupErrors(
      new DynamoDBClient({
        maxAttempts: 5,
        requestHandler: sdkRequestHandler(env, { connectionTimeout: 10_000, requestTimeout: 10_000 }),
      }),
      AWS_SERVICE.dynamodb,
      env,
    ),
    s3: withLeanPut(
      withSetupErrors(
        new S3Client({
          forcePathStyle: env.S3_FORCE_PATH_STYLE?.toLowerCase() === 'true',
          requestHandler,
          maxAttempts: 5,
        }),
        AWS_SERVICE.s3,
        env,
      ),
      { connections: 2 * concurrency + 2, proxies: readProxyEnv(env) },
    ),
  };
}
