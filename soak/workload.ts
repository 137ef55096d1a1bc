/**
 * The soak's traffic: plans of requests over fresh records, mixed as dealers and web forms send them, plus the
 * repeats a client makes (exact duplicates, `Idempotency-Key` repeats and misuse, concurrent races) and the
 * permanent refusals a downstream makes (a frame number registered twice).
 *
 * Every record carries a token of its own (in a sale's Street, in a case's comments), which reaches SAP and
 * Salesforce unchanged: the reconciliation finds what the downstreams received by token, whatever id the
 * service gave the record.
 */

/** The test client of the example configuration (config/clients.json: `"mode": "test"`): a share of the plans. */
export const TEST_CLIENT = 'example-dealer-test';

import { createHash } from 'node:crypto';
import type { Random } from './random.ts';

export type Operation = 'sale' | 'case';

export interface SoakRecord {
  token: string;
  op: Operation;
  fields: Record<string, unknown>;
}

export type PlanKind =
  /** One new sale. */
  | 'single'
  /** 2-20 new sales in one request. */
  | 'multi'
  /** One new case (JSON or form). */
  | 'case'
  /** A new body sent 4-8 times at once (half of them with one Idempotency-Key). */
  | 'race'
  /** An earlier accepted body without a key, again: the same ids expected, nothing delivered again. */
  | 'repeat'
  /** An earlier accepted body again with its Idempotency-Key: the same answer expected. */
  | 'keyRepeat'
  /** An earlier Idempotency-Key with another (new) body: 422 (or 409) expected, nothing accepted. */
  | 'keyConflict'
  /** A new sale with the frame number of an earlier one: SAP refuses the second with 409 (rejected). */
  | 'frameConflict';

export interface Plan {
  index: number;
  kind: PlanKind;
  op: Operation;
  /** The body's records, in order. */
  records: SoakRecord[];
  /** Records this plan sends for the first time (counted toward the campaign's size). */
  fresh: number;
  /** Case posted as an HTML form posts it. */
  form: boolean;
  idempotencyKey?: string;
  /** How many identical requests go at once (a race); 1 otherwise. */
  copies: number;
  /** The earlier plan repeated, whose key is reused or whose frame number is reused. */
  of?: number;
  /** The client sending it when not its operation's usual one: the flooding client's cases, the test client's. */
  client?: string;
  /** Sent as the test client (`"mode": "test"`): its records are answered by the simulators (testMode.ts). */
  test?: boolean;
}

/** The client that floods the cases queue at the start of the traffic (fair share between clients: docs/behaviour.md#batching). */
export const FLOODING_CLIENT = 'example-dealer';

/** The client that sends a plan: its own, else the dealer for sales and the web forms for cases. */
export const clientOf = (plan: Pick<Plan, 'op' | 'client'>): string =>
  plan.client ?? (plan.op === 'sale' ? 'example-dealer' : 'example-web-forms');

export interface PlanRequest {
  path: string;
  contentType: string;
  body: string;
  headers: Record<string, string>;
}

/**
 * The `traceparent` a client sends with a plan's requests: every other plan (odd index) sends one, so that a run has
 * records of traces the gateway started and of traces it joined (contract section 8); the same for each try and
 * copy of a plan, as a client retrying one request under its own trace sends it. Derived from the plan, so that the
 * campaign knows the caller's span ids afterwards (traceWhole.ts: their spans are parents outside the kept file).
 */
export const callerTraceparent = (plan: Pick<Plan, 'index' | 'records'>): string | undefined => {
  if (plan.index % 2 === 0) return undefined;
  const hash = createHash('sha256')
    .update(`soak-trace:${plan.index}:${plan.records[0]?.token ?? ''}`)
    .digest('hex');
  return `00-${hash.slice(0, 32)}-${hash.slice(32, 48)}-01`;
};

export const requestOf = (plan: Plan): PlanRequest => {
  const traceparent = callerTraceparent(plan);
  const headers: Record<string, string> = {
    ...(plan.idempotencyKey ? { 'idempotency-key': plan.idempotencyKey } : {}),
    ...(traceparent ? { traceparent } : {}),
  };
  if (plan.op === 'sale') {
    return {
      path: '/erp/sales_registration',
      contentType: 'application/json',
      body: JSON.stringify(plan.records.map((record) => record.fields)),
      headers,
    };
  }
  const fields = plan.records[0].fields;
  if (!plan.form) {
    return { path: '/crm/case', contentType: 'application/json', body: JSON.stringify(fields), headers };
  }
  const form = new URLSearchParams();
  for (const [name, value] of Object.entries(fields)) {
    form.append(name, typeof value === 'boolean' ? (value ? 'on' : 'off') : String(value));
  }
  return {
    path: '/crm/case',
    contentType: 'application/x-www-form-urlencoded',
    body: form.toString(),
    headers,
  };
};

/** Matches a record's token wherever it appears (SAP entity, Salesforce case body). */
export const TOKEN_PATTERN = /SK[0-9A-Z]{4}R\d+/;

const day = 24 * 60 * 60 * 1000;
const isoDate = (time: number) => new Date(time).toISOString().slice(0, 10);

export interface Workload {
  /** The next plan, or undefined once `records` fresh records are planned. */
  next(): Plan | undefined;
  /** Marks a plan answered 200 (so it may be repeated, its key reused, its frame number reused). */
  accepted(plan: Plan): void;
  /** Fresh records planned so far. */
  planned(): number;
}

/**
 * @param records how many fresh records to send in all (the campaign's size)
 * @param run a 4-character [0-9A-Z] tag of the campaign, in every token and frame number
 * @param flood how many of them are the flooding client's cases, planned first: its backlog on the cases queue is
 *   what the other clients' cases must not wait behind
 * @param testShare the share of the other plans sent as the test client (TEST_CLIENT): one new sale or
 *   case each, its last name one of the simulators' magic names or an ordinary one
 */
export const createWorkload = (
  records: number,
  run: string,
  random: Random,
  flood = 0,
  testShare = 0,
): Workload => {
  let floodLeft = Math.min(flood, records);
  let recordCount = 0;
  let planCount = 0;
  let fresh = 0;
  /** Accepted plans without a key (repeated without one) and with one (repeated, or misused, with it). */
  const unkeyed: Plan[] = [];
  const keyed: Plan[] = [];
  const singleSales: Plan[] = [];

  const newSale = (frame?: { FrameNum: string; DealerId: number }): SoakRecord => {
    const n = ++recordCount;
    const token = `SK${run}R${n}`;
    const commercial = random.chance(0.15);
    const fields: Record<string, unknown> = {
      DealerId: frame?.DealerId ?? random.pick([1234, 100234]),
      FrameNum: frame?.FrameNum ?? `SK${run}F${n}`,
      SaleDate: isoDate(Date.now() - random.int(0, 300) * day),
      Name: 'Soakrider',
      Name2: `Rider${n}`,
      Street: `${n} Soak Lane ${token}`,
      email: `rider${n}.${run.toLowerCase()}@example.com`,
      Phone: `+61 400 ${String(n % 1000).padStart(3, '0')} ${String(n % 997).padStart(3, '0')}`,
      CommPriv: commercial ? random.pick(['C', 'Commercial']) : random.pick(['P', 'P', 'private']),
    };
    if (commercial) fields.CompanyName = `Soak Fleet ${n}`;
    if (random.chance(0.7)) fields.Model = random.pick(['CBR650R', 'CRF300L', 'NC750X', 'EU22i']);
    if (random.chance(0.6)) fields.Town = 'Soakville';
    if (random.chance(0.6))
      fields.Postcode = random.chance(0.5) ? 2000 + (n % 7000) : String(2000 + (n % 7000));
    if (random.chance(0.3)) fields.MoreInfo = random.pick(['Y', 'N']);
    if (random.chance(0.2)) fields.DOB = isoDate(Date.now() - random.int(20 * 365, 70 * 365) * day);
    return { token, op: 'sale', fields };
  };

  const newCase = (): SoakRecord => {
    const n = ++recordCount;
    const token = `SK${run}R${n}`;
    const fields: Record<string, unknown> = {
      firstName: 'Soakcaller',
      surname: `Caller${n}`,
      email: `caller${n}.${run.toLowerCase()}@example.com`,
      comments: `Soak case ${token}: please call me about a service.`,
    };
    if (random.chance(0.8)) fields.privacyConsent = true;
    if (random.chance(0.3)) fields.subscribeToBrand = random.chance(0.5);
    const phone = random.next();
    if (phone < 0.5) fields.mobile = `+61 411 ${String(n % 1000).padStart(3, '0')} 000`;
    else if (phone < 0.75) fields.homePhone = `02 9${String(n % 1000).padStart(3, '0')} 0000`;
    if (random.chance(0.4)) fields.title = random.pick(['Mr', 'Ms', 'Dr']);
    if (random.chance(0.4)) fields.addressPostcode = String(2000 + (n % 7000));
    if (random.chance(0.2)) fields.frameNo = `SK${run}C${n}`;
    if (random.chance(0.2)) fields.siteName = 'soak.example.com';
    return { token, op: 'case', fields };
  };

  const plan = (fields: Omit<Plan, 'index'>): Plan => {
    const made: Plan = { ...fields, index: planCount++ };
    fresh += made.fresh;
    return made;
  };
  const key = () => `soak-${run}-${planCount}-${Math.floor(random.next() * 1e9).toString(36)}`;

  const freshPlan = (): Plan => {
    const roll = random.next();
    const idempotencyKey = random.chance(0.25) ? key() : undefined;
    if (roll < 0.51) {
      return plan({
        kind: 'single',
        op: 'sale',
        records: [newSale()],
        fresh: 1,
        form: false,
        copies: 1,
        idempotencyKey,
      });
    }
    if (roll < 0.56) {
      const count = Math.min(random.int(2, 20), Math.max(2, records - fresh));
      const sales = Array.from({ length: count }, () => newSale());
      return plan({
        kind: 'multi',
        op: 'sale',
        records: sales,
        fresh: count,
        form: false,
        copies: 1,
        idempotencyKey,
      });
    }
    const form = random.chance(0.4);
    return plan({
      kind: 'case',
      op: 'case',
      records: [newCase()],
      fresh: 1,
      form,
      copies: 1,
      idempotencyKey,
    });
  };

  /** One new sale or case of the test client: a magic last name (any case) or an ordinary one. */
  const testPlan = (): Plan => {
    const lastName = random.pick(['REJECT', 'Reject', 'RETRY', 'retry', 'FAIL', 'Fail', '', '', '', '']);
    const isSale = random.chance(0.6);
    const record = isSale ? newSale() : newCase();
    if (lastName) record.fields[isSale ? 'Name' : 'surname'] = lastName;
    return plan({
      kind: isSale ? 'single' : 'case',
      op: isSale ? 'sale' : 'case',
      records: [record],
      fresh: 1,
      form: isSale ? false : random.chance(0.4),
      copies: 1,
      client: TEST_CLIENT,
      test: true,
    });
  };

  const race = (): Plan => {
    const roll = random.next();
    const idempotencyKey = random.chance(0.5) ? key() : undefined;
    const copies = random.int(4, 8);
    if (roll < 0.4) {
      return plan({
        kind: 'race',
        op: 'sale',
        records: [newSale()],
        fresh: 1,
        form: false,
        copies,
        idempotencyKey,
      });
    }
    if (roll < 0.75) {
      const sales = Array.from({ length: random.int(2, 8) }, () => newSale());
      return plan({
        kind: 'race',
        op: 'sale',
        records: sales,
        fresh: sales.length,
        form: false,
        copies,
        idempotencyKey,
      });
    }
    const form = random.chance(0.4);
    return plan({ kind: 'race', op: 'case', records: [newCase()], fresh: 1, form, copies, idempotencyKey });
  };

  return {
    planned: () => fresh,
    accepted(done) {
      if (done.kind === 'keyConflict' || done.kind === 'repeat' || done.kind === 'keyRepeat') return;
      // The test client's plans are not repeated: the ledger follows live records, testMode.ts the test ones.
      if (done.test) return;
      // With an Idempotency-Key the key decides what is a repeat (docs/API.md#repeats-and-retries), so a keyed body is repeated with
      // its key only: without it, the same content is another record by design.
      (done.idempotencyKey ? keyed : unkeyed).push(done);
      if (done.op === 'sale' && done.records.length === 1) singleSales.push(done);
    },
    next() {
      if (fresh >= records) return undefined;
      if (floodLeft > 0) {
        floodLeft--;
        return plan({
          kind: 'case',
          op: 'case',
          records: [newCase()],
          fresh: 1,
          form: false,
          copies: 1,
          client: FLOODING_CLIENT,
        });
      }
      if (testShare > 0 && random.chance(testShare)) return testPlan();
      const roll = random.next();
      if (roll < 0.04) return race();
      if (roll < 0.09 && unkeyed.length > 0) {
        const earlier = random.pick(unkeyed);
        return plan({ ...earlier, kind: 'repeat', fresh: 0, copies: 1, of: earlier.index });
      }
      if (roll < 0.12 && keyed.length > 0) {
        const earlier = random.pick(keyed);
        return plan({ ...earlier, kind: 'keyRepeat', fresh: 0, copies: 1, of: earlier.index });
      }
      if (roll < 0.14 && keyed.length > 0) {
        const earlier = random.pick(keyed);
        const other = earlier.op === 'sale' ? [newSale()] : [newCase()];
        return plan({
          ...earlier,
          kind: 'keyConflict',
          records: other,
          fresh: 0,
          copies: 1,
          of: earlier.index,
        });
      }
      if (roll < 0.155 && singleSales.length > 0) {
        const earlier = random.pick(singleSales);
        const { FrameNum, DealerId } = earlier.records[0].fields as { FrameNum: string; DealerId: number };
        const sale = newSale({ FrameNum, DealerId });
        return plan({
          kind: 'frameConflict',
          op: 'sale',
          records: [sale],
          fresh: 1,
          form: false,
          copies: 1,
          of: earlier.index,
        });
      }
      return freshPlan();
    },
  };
};
