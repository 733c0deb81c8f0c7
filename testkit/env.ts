/// <reference path="./provided.d.ts" />
/**
 * What a test needs to reach the run's shared emulators, and names that never collide.
 */
import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import type { DynamoKind } from './emulator-processes.js';

/** Endpoints of the emulators the global setup started for this run. */
export interface TestServices {
  dynamoEndpoint: string;
  s3Endpoint: string;
  /** dynalite lacks `ReturnValuesOnConditionCheckFailure` and TTL: tests of those can skip on it. */
  dynamoKind: DynamoKind;
}

/** The run's shared emulators (from the global setup). Call inside a test file, not at config time. */
export function testServices(): TestServices {
  return {
    dynamoEndpoint: inject('dynamoEndpoint'),
    s3Endpoint: inject('s3Endpoint'),
    dynamoKind: inject('dynamoKind') as DynamoKind,
  };
}

let counter = 0;

/**
 * A name unique across the run's test processes, valid both as an S3 bucket name (lower case,
 * digits and dashes, at most 63 characters) and as a DynamoDB table name.
 */
export function uniqueName(prefix: string): string {
  const cleaned =
    prefix
      .toLowerCase()
      .replace(/[^a-z0-9-]+/g, '-')
      .replace(/^-+|-+$/g, '') || 'test';
  const suffix = `${process.pid.toString(36)}-${(counter++).toString(36)}-${randomBytes(3).toString('hex')}`;
  return `${cleaned.slice(0, 63 - suffix.length - 1)}-${suffix}`;
}
