/**
 * One environment -> settings parser for every Lambda (lambda/runtime/lambda-settings.ts): a named consumer's
 * function (the latest view's too) gets the follower's checks of a key prefix and of cursor names, with the same
 * messages, naming its own variables. Before the runtime kit, the consumer took SNAPSHOT_PREFIX raw.
 */
import { describe, expect, it } from 'vitest';
import { parseSettings } from '../../lambda/contract/settings.js';
import { consumerLambdaSettings, lambdaSettings } from '../../lambda/runtime/lambda-settings.js';

const CONSUMER = { CONSUMER_NAME: 'indexer', CURSOR_TABLE: 't', SNAPSHOT_BUCKET: 'b' };
const FOLLOWER = { CURSOR_TABLE: 't', SNAPSHOT_BUCKET: 'b' };

/** The message a parser throws with, or undefined when it accepts. */
function refusal(parse: () => unknown): string | undefined {
  try {
    parse();
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

describe("the Lambdas' settings", () => {
  it("refuse a bad SNAPSHOT_PREFIX in a consumer's function as in the follower's, with the same message", () => {
    for (const prefix of ['/mirror/', 'a/../b/', 'a\\b/', 'tab\there/', `${'p'.repeat(300)}/`]) {
      const follower = refusal(() => lambdaSettings({ ...FOLLOWER, SNAPSHOT_PREFIX: prefix }));
      expect(follower, prefix).toMatch(/^SNAPSHOT_PREFIX: /);
      expect(
        refusal(() => consumerLambdaSettings({ ...CONSUMER, SNAPSHOT_PREFIX: prefix })),
        prefix,
      ).toBe(follower);
    }
  });

  it("check a consumer's names as cursor names, naming its variables", () => {
    expect(refusal(() => consumerLambdaSettings({ ...CONSUMER, CONSUMER_NAME: 'has space' }))).toMatch(
      /^CONSUMER_NAME: /,
    );
    expect(refusal(() => consumerLambdaSettings({ ...CONSUMER, DEPENDS_ON: 'ok,not/ok' }))).toMatch(/^DEPENDS_ON: /);
    expect(refusal(() => consumerLambdaSettings({ ...CONSUMER, DEPENDS_ON: 'indexer' }))).toMatch(
      /^DEPENDS_ON: a cursor cannot depend on itself/,
    );
    expect(refusal(() => consumerLambdaSettings({ ...CONSUMER, CURSOR_NAME: '-bad' }))).toBe(
      refusal(() => parseSettings({ CURSOR_NAME: '-bad' })),
    );
  });

  it('read a good consumer environment as before', () => {
    expect(
      consumerLambdaSettings({
        ...CONSUMER,
        SNAPSHOT_PREFIX: 'mirror/',
        DEPENDS_ON: ' catalog-to-s3 , view-latest,',
        CHECKPOINT_EVERY: '8',
      }),
    ).toEqual({
      consumerName: 'indexer',
      table: 't',
      bucket: 'b',
      prefix: 'mirror/',
      dependsOn: ['catalog-to-s3', 'view-latest'],
      checkpointEvery: 8,
      followerCursor: 'catalog-to-s3',
    });
    expect(consumerLambdaSettings({ ...CONSUMER, CURSOR_NAME: ' sync-a ' })).toMatchObject({
      prefix: '',
      dependsOn: [],
      checkpointEvery: 1,
      followerCursor: 'sync-a',
    });
  });
});
