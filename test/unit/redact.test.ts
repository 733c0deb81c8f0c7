import { describe, expect, it } from 'vitest';
import { InvalidDocumentError } from '../../lambda/catalog/errors.js';
import { FetchError } from '../../lambda/catalog/http-errors.js';
import { redactUrl } from '../../lambda/contract/redact.js';
import { parseSettings } from '../../lambda/contract/settings.js';

describe('redactUrl', () => {
  it('hides credentials and every query value, keeps the rest', () => {
    expect(redactUrl('https://api.nuget.org/v3/catalog0/page1.json')).toBe(
      'https://api.nuget.org/v3/catalog0/page1.json',
    );
    expect(redactUrl('https://user:s3cret@feed.example/v3/index.json')).toBe(
      'https://REDACTED@feed.example/v3/index.json',
    );
    expect(redactUrl('https://x.blob.core.windows.net/c/index.json?sv=2020&sig=abc%2Bdef&se=2026')).toBe(
      'https://x.blob.core.windows.net/c/index.json?sv=REDACTED&sig=REDACTED&se=REDACTED',
    );
    expect(redactUrl('https://b.s3.amazonaws.com/k?X-Amz-Credential=AKIA&X-Amz-Signature=f00')).not.toMatch(/AKIA|f00/);
    expect(redactUrl('not a url?token=abc')).toBe('not a url?REDACTED');
  });

  it('is applied to every error message that names a URL', () => {
    const secret = 'https://me:hunter2@feed.example/v3/index.json?token=t0ps3cret';
    for (const error of [
      new FetchError(secret, 'HTTP 500', true),
      new InvalidDocumentError(secret, 'not valid JSON'),
    ]) {
      expect(error.message).not.toMatch(/hunter2|t0ps3cret/);
      expect(error.url).not.toMatch(/hunter2|t0ps3cret/);
      expect(JSON.stringify({ ...error, message: error.message })).not.toMatch(/hunter2|t0ps3cret/);
    }
    expect(() => parseSettings({ ALLOWED_ORIGINS: 'https://me:hunter2@cdn.example/path' })).toThrow(/REDACTED/);
    expect(() => parseSettings({ ALLOWED_ORIGINS: 'https://me:hunter2@cdn.example/path' })).not.toThrow(/hunter2/);
  });
});
