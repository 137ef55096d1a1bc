import type { APIGatewayProxyResult } from 'aws-lambda';
import { jsonResponse } from '../../http/responses.ts';
import { openKindOf } from '../../records/keys.ts';
import { countOpen } from '../../store/openRecords.ts';
import { statusPage } from '../../store/statusIndex.ts';
import { RECORD_KINDS } from '../../types.ts';
import { activitySource } from './activitySource.ts';
import type { ActivitySource } from './hours.ts';

/** Open records are counted up to this many (a bounded read however large a backlog grows). */
export const MAX_OPEN = 50_000;

/**
 * The open (`accepted`) records: how many (the `open` index's partitions, live and test, counted up to MAX_OPEN)
 * and when the oldest was accepted (the `status` index's `<kind>#accepted` partitions, oldest first, one entry each).
 */
const openRecords = async (): Promise<{ count: number; oldestAcceptedAt?: string }> => {
  const [counts, oldest] = await Promise.all([
    Promise.all(
      RECORD_KINDS.flatMap((kind) =>
        [false, true].map((test) => countOpen(openKindOf(kind, test), MAX_OPEN)),
      ),
    ),
    Promise.all(RECORD_KINDS.map((kind) => statusPage(kind, 'accepted', { pageSize: 1 }))),
  ]);
  const oldestAcceptedAt = oldest
    .flatMap((page) => page.entries.map((entry) => entry.acceptedAt))
    .sort()
    .at(0);
  return {
    count: Math.min(
      MAX_OPEN,
      counts.reduce((sum, count) => sum + count, 0),
    ),
    ...(oldestAcceptedAt ? { oldestAcceptedAt } : {}),
  };
};

/**
 * `GET /console/api/activity`: records accepted, delivered and failed per hour over the last 24 hours per
 * downstream (CloudWatch's metrics on AWS, the store under npm start: lib/console/activity/activitySource.ts), and
 * the open records with the oldest's acceptance.
 *
 * @example
 * await activityAnswer(new Date()) // 200 {"hours":[{"hour":"…","downstream":"erp","accepted":3,…},…],"open":{"count":2,"oldestAcceptedAt":"…"}}
 */
export const activityAnswer = async (
  now: Date = new Date(),
  source: ActivitySource = activitySource(),
): Promise<APIGatewayProxyResult> => {
  const [hours, open] = await Promise.all([source.hours(now), openRecords()]);
  return jsonResponse(200, { hours, open });
};
