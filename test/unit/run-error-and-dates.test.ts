/** A date alone as midnight UTC (one helper in contract/time.ts), and the `error` of a failed run's summary. */
import { describe, expect, it } from 'vitest';
import { expandDateOnly, formatTimestamp, parseTimeInput, TimestampError } from '../../lambda/contract/time.js';
import { runErrorOf } from '../../lambda/contract/run-summary.js';
import { FetchError } from '../../lambda/catalog/http-errors.js';
import { InvalidDocumentError } from '../../lambda/catalog/errors.js';

describe('a date alone', () => {
  it('is midnight UTC; any other text is left to the exact parser', () => {
    expect(expandDateOnly('2017-11-01')).toBe('2017-11-01T00:00:00Z');
    expect(formatTimestamp(parseTimeInput('2017-11-01'))).toBe('2017-11-01T00:00:00.0000000Z');
    expect(parseTimeInput('2017-11-01')).toBe(parseTimeInput('2017-11-01T00:00:00Z'));
    expect(expandDateOnly('2017-11-01T12:00:00Z')).toBe('2017-11-01T12:00:00Z');
    expect(formatTimestamp(parseTimeInput('2017-10-31T23:30:32.4197849Z'))).toBe('2017-10-31T23:30:32.4197849Z');
    for (const bad of ['2017-02-30', '2017-11-1', '2017-11', '20171101', ' 2017-11-01', '2017-11-01T']) {
      expect(() => parseTimeInput(bad), bad).toThrow(TimestampError);
    }
  });
});

describe('runErrorOf', () => {
  it('a fetch error: its message, its URL redacted, its code', () => {
    const error = new FetchError('https://user:secret@example.org/v3/catalog0/index.json?sig=abc', 'HTTP 503', true, {
      status: 503,
    });
    const shown = runErrorOf(error);
    expect(shown).toEqual({
      message: error.message,
      url: 'https://REDACTED@example.org/v3/catalog0/index.json?sig=REDACTED',
      code: 'CS_ERR_FETCH',
    });
    expect(JSON.stringify(shown)).not.toContain('secret');
    expect(JSON.stringify(shown)).not.toContain('abc');
  });

  it('a document error names its URL and code', () => {
    const error = new InvalidDocumentError('https://example.org/leaf.json', 'not valid JSON');
    expect(runErrorOf(error)).toMatchObject({ url: 'https://example.org/leaf.json', code: 'CS_ERR_INVALID_DOCUMENT' });
  });

  it('an error that names no URL and is not a catalog-sync one: no url, CS_ERR_SYNC; a URL it carries is redacted', () => {
    expect(runErrorOf(new Error('disk full'))).toEqual({ message: 'disk full', code: 'CS_ERR_SYNC' });
    expect(runErrorOf('plain')).toEqual({ message: 'plain', code: 'CS_ERR_SYNC' });
    const foreign = Object.assign(new Error('boom'), { url: 'https://h.example/x?token=t0k' });
    expect(runErrorOf(foreign)).toEqual({
      message: 'boom',
      url: 'https://h.example/x?token=REDACTED',
      code: 'CS_ERR_SYNC',
    });
  });
});
