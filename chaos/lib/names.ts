import { randomBytes } from 'node:crypto';

let counter = 0;

/** A name valid as an S3 bucket and a DynamoDB table name, unique in this process. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${process.pid.toString(36)}-${(counter++).toString(36)}-${randomBytes(3).toString('hex')}`;
}
