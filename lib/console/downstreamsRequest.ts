import type { APIGatewayProxyResult } from 'aws-lambda';
import { jsonResponse } from '../http/responses.ts';
import { readHolds } from '../outage/holdStore.ts';
import type { ApiUsageReading, Downstream, HoldRecord } from '../outage/types.ts';
import { outageProbeSeconds } from '../settings/settings.ts';
import { countOpen } from '../store/openRecords.ts';
import { serviceReader } from '../store/statusIndex.ts';
import type { RecordKind } from '../types.ts';

/** Records waiting are counted up to this many (a bounded read however large a backlog grows). */
export const MAX_WAITING = 20_000;

/** Each downstream, its name on the page, and the kind of record it takes. */
const DOWNSTREAMS: readonly { downstream: Downstream; name: 'SAP' | 'Salesforce'; kind: RecordKind }[] = [
  { downstream: 'erp', name: 'SAP', kind: 'salesRegistration' },
  { downstream: 'crm', name: 'Salesforce', kind: 'caseRecord' },
];

/**
 * A hold as the page shows it. While held, `probeAt` is when the next probe may start; each probe's claim moves it
 * one probe period on (lib/outage/holdStore.ts claimProbeWrite), so the last probe started a period before it,
 * unless that is no later than the hold's opening (no probe yet).
 */
const holdView = (hold: HoldRecord, probeSeconds: number) => {
  if (!hold.held) return { held: false };
  const probeAt = hold.probeAt ? Date.parse(hold.probeAt) : Number.NaN;
  const lastProbe = probeAt - probeSeconds * 1000;
  return {
    held: true,
    ...(hold.heldSince ? { heldSince: hold.heldSince } : {}),
    ...(hold.reason ? { reason: hold.reason } : {}),
    ...(hold.heldSince && lastProbe > Date.parse(hold.heldSince)
      ? { lastProbeAt: new Date(lastProbe).toISOString() }
      : {}),
    ...(hold.probeAt ? { nextProbeAt: hold.probeAt } : {}),
  };
};

/** The stored reading as the page shows it (only its three fields, whatever else the item holds). */
const apiUsageView = ({ used, allowed, at }: ApiUsageReading) => ({ used, allowed, at });

/**
 * `GET /console/api/downstreams`: SAP and Salesforce, each open or held (since when, why, the last and next probe)
 * and the live records waiting for it (the `open` index's count of its kind, bounded by MAX_WAITING). Two GetItems
 * naming the holds' attributes and two counting Queries. Salesforce's API allowance (`apiUsage`: used, allowed, and
 * when it was read) is the last reading the CRM's hold stored (lib/outage/rules.ts, withApiUsage): at most a minute
 * old while cases flow; absent until a Salesforce answer carried one.
 *
 * @example
 * await downstreamsAnswer() // 200 {"downstreams":[{"downstream":"erp","name":"SAP","held":false,"waiting":0},…]}
 */
export const downstreamsAnswer = async (): Promise<APIGatewayProxyResult> => {
  const probeSeconds = outageProbeSeconds();
  const [holds, ...waiting] = await Promise.all([
    readHolds(serviceReader()),
    ...DOWNSTREAMS.map(({ kind }) => countOpen(kind, MAX_WAITING)),
  ]);
  return jsonResponse(200, {
    downstreams: DOWNSTREAMS.map(({ downstream, name }, i) => ({
      downstream,
      name,
      ...holdView(holds[downstream], probeSeconds),
      waiting: waiting[i],
      ...(holds[downstream].apiUsage ? { apiUsage: apiUsageView(holds[downstream].apiUsage) } : {}),
    })),
  });
};
