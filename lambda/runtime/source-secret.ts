/**
 * A private feed's credentials, kept in AWS Secrets Manager rather than in `CATALOG_SOURCE`: the function's
 * configuration (template, `cdk.out`, `ListFunctions`) holds only the secret's ARN, in `SOURCE_SECRET_ARN`.
 * The secret is read once per container; the credentials then join the source URL as
 * `https://user:password@host/…` does, so they go as HTTP Basic authentication to the source's origin only.
 */
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { sdkRequestHandler } from '../stores/proxy-agents.js';
import {
  ENV_NAMES,
  parseSettings,
  redactUrl,
  SettingsError,
  SOURCE_SECRET_ENV,
  type RawSettings,
  type SyncSettings,
} from '../contract/index.js';

/**
 * The user name sent with a secret that is a bare token. Azure Artifacts and GitHub Packages take a personal
 * access token as the password with any user name; a feed that checks the user name needs the JSON form.
 */
export const TOKEN_USER_NAME = 'catalog-sync';

/** The user name and password of a private feed. */
export interface SourceCredentials {
  readonly username: string;
  readonly password: string;
}

/** The secret named by `SOURCE_SECRET_ARN`, or undefined when it is unset or blank. */
export function sourceSecretId(env: NodeJS.ProcessEnv): string | undefined {
  const id = env[SOURCE_SECRET_ENV]?.trim();
  return id ? id : undefined;
}

/**
 * Reads a secret's value: `{"username": "…", "password": "…"}` (username optional), or a bare token (the
 * password, surrounding whitespace trimmed, with {@link TOKEN_USER_NAME}). No message quotes any of the value.
 *
 * @throws {@link SettingsError} naming `SOURCE_SECRET_ARN` and the secret when the value cannot be used.
 */
export function parseSourceSecret(secretId: string, value: string | undefined): SourceCredentials {
  const fail = (reason: string): never => {
    throw new SettingsError(SOURCE_SECRET_ENV, `secret ${secretId} ${reason}`);
  };
  if (value === undefined) return fail('has no SecretString (a binary secret): store the credentials as text');
  const text = value.trim();
  if (text === '') return fail('is empty: store a token, or {"username": "…", "password": "…"}');
  if (!text.startsWith('{')) return checked({ username: TOKEN_USER_NAME, password: text }, fail);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    // JSON.parse's own message quotes the text around the error: it could hold the password.
    return fail('starts with "{" but is not valid JSON: store {"username": "…", "password": "…"}, or a bare token');
  }
  const { username = TOKEN_USER_NAME, password } = json as Record<string, unknown>;
  if (typeof username !== 'string' || typeof password !== 'string') {
    return fail('must hold "password" (and optionally "username") as text');
  }
  return checked({ username, password }, fail);
}

function checked(credentials: SourceCredentials, fail: (reason: string) => never): SourceCredentials {
  if (credentials.password === '') fail('has an empty "password"');
  // HTTP Basic joins them with ':' and the feed splits at the first one: a ':' in the user name would move
  // part of it into the password.
  if (credentials.username.includes(':'))
    fail('has a "username" holding ":", which HTTP Basic authentication cannot send');
  return credentials;
}

/**
 * The settings with `credentials` joined to the source URL, checked as credentials in `CATALOG_SOURCE` are
 * (https only, or this machine). Credentials in both places are refused: which ones would win is a guess.
 */
export function withSourceCredentials(
  raw: RawSettings,
  settings: SyncSettings,
  credentials: SourceCredentials,
): SyncSettings {
  const source = new URL(settings.source);
  if (source.username || source.password) {
    throw new SettingsError(
      ENV_NAMES.CATALOG_SOURCE,
      `${JSON.stringify(redactUrl(source.href))} has credentials and ${SOURCE_SECRET_ENV} is set: keep them in the secret only`,
    );
  }
  // Percent-encoded first: the URL setters leave '%' as it is, and HttpClient decodes what it finds.
  source.username = encodeURIComponent(credentials.username);
  source.password = encodeURIComponent(credentials.password);
  const names = {
    ...ENV_NAMES,
    CATALOG_SOURCE: `${ENV_NAMES.CATALOG_SOURCE} (with the credentials of ${SOURCE_SECRET_ENV})`,
  };
  return { ...settings, source: parseSettings({ ...raw, CATALOG_SOURCE: source.href }, names).source };
}

/**
 * Reads secrets through Secrets Manager (endpoint from the SDK's `AWS_ENDPOINT_URL_SECRETS_MANAGER`, if set),
 * each once: the value is kept for the life of the container. A failed read is not kept, so the next
 * invocation tries again. Its requests honour the proxy variables of `env` as every other client's do.
 */
export class SourceSecretReader {
  constructor(private readonly env: Readonly<Record<string, string | undefined>> = process.env) {}

  private readonly cache = new Map<string, Promise<SourceCredentials>>();
  private client: SecretsManagerClient | undefined;

  /** Secrets Manager calls made so far (for the tests' and the operator's accounting). */
  reads = 0;

  /** The credentials held by `secretId`. @throws {@link SettingsError} naming `SOURCE_SECRET_ARN` and the secret. */
  read(secretId: string): Promise<SourceCredentials> {
    let pending = this.cache.get(secretId);
    if (!pending) {
      pending = this.fetch(secretId);
      this.cache.set(secretId, pending);
      pending.catch(() => {
        if (this.cache.get(secretId) === pending) this.cache.delete(secretId);
      });
    }
    return pending;
  }

  private async fetch(secretId: string): Promise<SourceCredentials> {
    this.client ??= new SecretsManagerClient({
      maxAttempts: 3,
      requestHandler: sdkRequestHandler(this.env, { sockets: 2, connectionTimeout: 10_000, requestTimeout: 30_000 }),
    });
    this.reads++;
    let value: string | undefined;
    try {
      ({ SecretString: value } = await this.client.send(new GetSecretValueCommand({ SecretId: secretId })));
    } catch (cause) {
      const { name, message } = cause as Error;
      throw new SettingsError(SOURCE_SECRET_ENV, `could not read secret ${secretId}: ${name}: ${message}`, { cause });
    }
    return parseSourceSecret(secretId, value);
  }
}

/** The private feed's credentials (SOURCE_SECRET_ARN), read once per container. */
export const sourceSecrets = new SourceSecretReader();
