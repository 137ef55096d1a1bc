/**
 * The change to keyed content ids (lib/intake/recordIds.ts): records stored before it keep their ids, and a repeat
 * of their content within the duplicate window (24 hours) is still recognised. Without a key, through the legacy id
 * read before a record is made; with an `Idempotency-Key`, through the key's entry, which says which ids its first
 * request used. Records are stored as the code before the change stored them (unkeyed SHA-256 ids), against dynalite.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { acceptRecords, newStatusRecord } from '../../lib/intake/acceptRecords.ts';
import { canonicalJson, contentId, keyedId, legacyContentId, sha256 } from '../../lib/intake/recordIds.ts';
import { claimIdempotencyKey } from '../../lib/store/idempotencyEntries.ts';
import { getStatusRecord } from '../../lib/store/statusRecords.ts';
import type { CaseRecord } from '../../lib/types.ts';
import { CONTENT_ID_KEY } from '../../testkit/apiKeys.ts';
import { uniqueFrame } from '../../testkit/factories/records.ts';
import { isolatedAws } from '../../testkit/isolatedAws.ts';
import { seedStatusRecords } from '../../testkit/seedStatus.ts';

const OWNER = 'example-web-forms';
const HOUR = 60 * 60 * 1000;
const NOW = new Date('2026-11-20T08:00:00.000Z');
const ago = (ms: number) => new Date(NOW.getTime() - ms);

let aws: Awaited<ReturnType<typeof isolatedAws>>;
beforeAll(async () => {
  aws = await isolatedAws();
});

const caseRecord = (): CaseRecord => ({
  firstName: 'Lea',
  surname: 'Legacy',
  email: 'lea.legacy@example.com',
  frameNo: uniqueFrame('LEGACY'),
});

/** The record as the code before keyed ids stored it, accepted at `acceptedAt` under `id`. */
const storedBefore = async (id: string, record: CaseRecord, acceptedAt: Date) => {
  const status = newStatusRecord(
    id,
    { kind: 'caseRecord', records: [record], requestId: 'before-the-change', owner: OWNER },
    record,
    acceptedAt,
  );
  await seedStatusRecords([status]);
};

let requests = 0;
const send = async (record: CaseRecord, idempotencyKey?: string) =>
  acceptRecords({
    kind: 'caseRecord',
    records: [record],
    requestId: `after-the-change-${++requests}`,
    owner: OWNER,
    idempotencyKey,
    now: NOW,
  });

const queuedIds = async () => (await aws.drain(aws.resources.queues.CaseQueue.url)).map((m) => m.id);

describe('content stored under its unkeyed id before the change', () => {
  it('sent again within 24 hours without a key, gets its old id back and is not queued again', async () => {
    // Prepare
    const record = caseRecord();
    const legacyId = legacyContentId('caseRecord', record, OWNER);
    await storedBefore(legacyId, record, ago(2 * HOUR));
    await queuedIds();
    // Act
    const ids = await send(record);
    // Assess: the old record answers; nothing was made under the keyed id.
    expect(ids).toEqual([legacyId]);
    expect(await queuedIds()).toEqual([]);
    expect(await getStatusRecord(contentId(CONTENT_ID_KEY, 'caseRecord', record, OWNER))).toBeUndefined();
  });

  it('sent again after 24 hours, is a new record under its keyed id (the old one keeps its id)', async () => {
    // Prepare
    const record = caseRecord();
    const legacyId = legacyContentId('caseRecord', record, OWNER);
    await storedBefore(legacyId, record, ago(25 * HOUR));
    await queuedIds();
    // Act
    const ids = await send(record);
    const again = await send(record);
    // Assess
    const keyed = contentId(CONTENT_ID_KEY, 'caseRecord', record, OWNER);
    expect(ids).toEqual([keyed]);
    expect(again).toEqual([keyed]);
    expect(await queuedIds()).toEqual([keyed]);
    expect((await getStatusRecord(legacyId))?.requestId).toBe('before-the-change');
  });

  it('new content gets its keyed id, not the unkeyed one', async () => {
    const record = caseRecord();
    const ids = await send(record);
    expect(ids).toEqual([contentId(CONTENT_ID_KEY, 'caseRecord', record, OWNER)]);
    expect(ids).not.toEqual([legacyContentId('caseRecord', record, OWNER)]);
    await queuedIds();
  });
});

describe('an Idempotency-Key first used before the change', () => {
  it('is answered the ids its first request gave, and a key first used now gets keyed ones', async () => {
    // Prepare: the key's entry and record as the code before the change wrote them (no `contentIds` on the entry).
    const record = caseRecord();
    const keyHash = sha256(`${OWNER}\nkey-before`);
    const oldId = keyedId(keyHash, legacyContentId('caseRecord', record, OWNER));
    await storedBefore(oldId, record, ago(HOUR));
    const startedAt = ago(HOUR);
    await claimIdempotencyKey(
      {
        kind: 'caseRecord',
        keyHash,
        // The body's hash, as the hold computes it.
        bodyHash: sha256(canonicalJson([record])),
        state: 'done',
        startedAt: startedAt.toISOString(),
        expiresAt: Math.floor(NOW.getTime() / 1000) + 23 * 3600,
      },
      Math.floor(startedAt.getTime() / 1000),
    );
    await queuedIds();
    // Act
    const repeat = await send(record, 'key-before');
    const other = caseRecord();
    const fresh = await send(other, 'key-after');
    // Assess
    expect(repeat).toEqual([oldId]);
    expect(fresh).toEqual([
      keyedId(sha256(`${OWNER}\nkey-after`), contentId(CONTENT_ID_KEY, 'caseRecord', other, OWNER)),
    ]);
    expect(await getStatusRecord(fresh[0])).toMatchObject({ status: 'accepted' });
    expect(await queuedIds()).toEqual(fresh);
  });
});
