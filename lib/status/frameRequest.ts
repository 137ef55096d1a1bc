import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { callerName, isTestCaller } from '../clients/types.ts';
import { type CallerContext, callerOf } from '../http/callerIdentity.ts';
import { RequestRefusedError } from '../http/errors.ts';
import { jsonResponse } from '../http/responses.ts';
import { salesRecordsByFrame } from '../store/frameRecords.ts';
import { heldSinceOf } from './heldSince.ts';
import { statusView } from './statusView.ts';

/** As intake's rule for FrameNum (schemas/salesRegistration.schema.json): at most 30 characters once trimmed. */
export const FRAME_NUM_MAX_LENGTH = 30;

/** The frame number asked for, trimmed as intake trims it; a missing, repeated, blank or over-long one: 400. */
const frameNumOf = (event: APIGatewayProxyEvent): string => {
  const values = event.multiValueQueryStringParameters?.FrameNum;
  if (values && values.length > 1) throw new RequestRefusedError(400, 'FrameNum must be a single value');
  const value = event.queryStringParameters?.FrameNum ?? values?.[0];
  if (value === undefined) throw new RequestRefusedError(400, 'FrameNum is required');
  const frameNum = value.trim();
  if (frameNum === '') throw new RequestRefusedError(400, 'FrameNum must not be blank');
  if (frameNum.length > FRAME_NUM_MAX_LENGTH)
    throw new RequestRefusedError(400, `FrameNum must be at most ${FRAME_NUM_MAX_LENGTH} characters`);
  return frameNum;
};

/**
 * `GET /erp/sales_registration?FrameNum=<frame>`: the caller's own sales records for a frame number, newest first
 * (one Query of the `frame` index). None, or only other callers' records: an empty list, never 403/404, so the
 * answer tells nothing about other callers' records. While SAP is held, its `accepted` records show `heldSince` (one
 * read of the hold for the whole list, none when no record is `accepted`).
 *
 * @example
 * await frameRequest({ ...event, queryStringParameters: { FrameNum: 'TESTFRAME00000001' } }, context)
 * // 200 {"FrameNum":"TESTFRAME00000001","records":[{"id":"3f0c…","status":"delivered",…}]}
 */
export const frameRequest = async (
  event: APIGatewayProxyEvent,
  context: CallerContext,
): Promise<APIGatewayProxyResult> => {
  const frameNum = frameNumOf(event);
  const caller = callerOf(context);
  const entries = await salesRecordsByFrame(callerName(caller), frameNum);
  // The list is the caller's own records, so they are a test client's test records: the `frame` index projects
  // no `test` (a deployed index's projection cannot change in place), the caller's mode says it.
  const test = isTestCaller(caller);
  const heldSince = test ? undefined : await heldSinceOf('salesRegistration', entries);
  return jsonResponse(200, {
    FrameNum: frameNum,
    records: entries.map((entry) =>
      statusView({ ...entry, ...(test ? { test: true as const } : {}) }, heldSince),
    ),
  });
};
