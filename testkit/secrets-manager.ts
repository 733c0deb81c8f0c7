/**
 * A tiny Secrets Manager on 127.0.0.1: the AWS JSON 1.1 protocol (`POST /`, `X-Amz-Target:
 * secretsmanager.GetSecretValue`), enough for the SDK's `GetSecretValueCommand`. No emulator of Secrets Manager
 * is installed; this one answers from an in-memory map and records every request, so a test can count reads.
 * Reach it with `AWS_ENDPOINT_URL_SECRETS_MANAGER` = {@link SecretsManagerServer.endpoint}.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request as received. */
export interface SecretsManagerRequest {
  readonly target: string;
  readonly body: Record<string, unknown>;
  /** Whether the SDK signed it (a SigV4 `Authorization` header). */
  readonly signed: boolean;
}

const TARGET_PREFIX = 'secretsmanager.';

/** A Secrets Manager answering GetSecretValue from {@link SecretsManagerServer.secrets}. */
export class SecretsManagerServer {
  /** Secret values by ARN (a name is looked up as the ARN's last part, `…:secret:<name>-xxxxxx`). */
  readonly secrets = new Map<string, { string?: string; binary?: Buffer }>();
  readonly requests: SecretsManagerRequest[] = [];

  private constructor(
    private readonly server: Server,
    /** `http://127.0.0.1:<port>`. */
    readonly endpoint: string,
  ) {}

  /** Starts a server on a free port of 127.0.0.1. */
  static async start(): Promise<SecretsManagerServer> {
    let instance: SecretsManagerServer | undefined;
    const server = createServer((request, response) => void instance!.answer(request, response));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', resolve);
    });
    instance = new SecretsManagerServer(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    return instance;
  }

  /** Reads of `secretId` so far. */
  readsOf(secretId: string): number {
    return this.requests.filter((r) => r.target === `${TARGET_PREFIX}GetSecretValue` && r.body.SecretId === secretId)
      .length;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async answer(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const target = String(request.headers['x-amz-target'] ?? '');
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>;
    } catch {
      return this.error(response, 'InvalidRequestException', 'the body is not JSON');
    }
    this.requests.push({
      target,
      body,
      signed: String(request.headers.authorization ?? '').startsWith('AWS4-HMAC-SHA256 '),
    });
    if (request.method !== 'POST' || target !== `${TARGET_PREFIX}GetSecretValue`) {
      return this.error(response, 'UnknownOperationException', `${target || '(no X-Amz-Target)'} is not served here`);
    }
    const id = String(body.SecretId ?? '');
    const found = [...this.secrets].find(([arn]) => arn === id || /:secret:(.+)-[A-Za-z0-9]{6}$/.exec(arn)?.[1] === id);
    if (!found)
      return this.error(response, 'ResourceNotFoundException', "Secrets Manager can't find the specified secret.");
    const [arn, value] = found;
    this.json(response, 200, {
      ARN: arn,
      Name: /:secret:(.+)-[A-Za-z0-9]{6}$/.exec(arn)?.[1] ?? arn,
      VersionId: '00000000-0000-4000-8000-000000000001',
      VersionStages: ['AWSCURRENT'],
      CreatedDate: 1_700_000_000,
      ...(value.string === undefined ? {} : { SecretString: value.string }),
      ...(value.binary === undefined ? {} : { SecretBinary: value.binary.toString('base64') }),
    });
  }

  private error(response: ServerResponse, type: string, message: string): void {
    response.setHeader('x-amzn-errortype', type);
    this.json(response, 400, { __type: type, message });
  }

  private json(response: ServerResponse, status: number, body: unknown): void {
    const text = JSON.stringify(body);
    response.writeHead(status, {
      'content-type': 'application/x-amz-json-1.1',
      'content-length': Buffer.byteLength(text),
    });
    response.end(text);
  }
}
