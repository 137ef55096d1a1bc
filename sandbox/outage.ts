import { jsonObjectBody } from './controlBody.ts';
import type { Exchange } from './server.ts';

/** What `GET /_sandbox/outage` answers: whether the sandbox plays an outage, and what reached it meanwhile. */
export interface OutageState {
  down: boolean;
  /** While down: since when (ISO). */
  since?: string;
  /** Business requests received during the current (or the last) outage, each answered 503. */
  callsWhileDown: number;
  /** Of those, delivery calls (SAP: POST; Salesforce: PATCH); the rest are token or CSRF fetches. */
  deliveryCallsWhileDown: number;
}

/**
 * A sandbox's outage switch, shared by all its endpoints: while down, every business request (everything but
 * `/_sandbox/`) is answered 503 and counted. Endpoints of their own files honour it through {@link refuseWhileDown}
 * (or `isDown()`); the sandbox's handler already calls it before routing, so any route it dispatches to is covered.
 */
export interface SandboxOutage {
  isDown(): boolean;
  /** Switches the outage on or off; switching it on starts new counts. */
  setDown(down: boolean): void;
  state(): OutageState;
  /** Counts one business request received while down. */
  count(delivery: boolean): void;
}

/**
 * Creates a sandbox's outage switch, up.
 *
 * @example
 * const outage = createSandboxOutage();
 * outage.setDown(true);
 * outage.state(); // { down: true, since: '2026-11-27T03:10:00.000Z', callsWhileDown: 0, deliveryCallsWhileDown: 0 }
 */
export const createSandboxOutage = (): SandboxOutage => {
  let since: string | undefined;
  let calls = 0;
  let deliveries = 0;
  return {
    isDown: () => since !== undefined,
    setDown(down) {
      if (down && since === undefined) {
        since = new Date().toISOString();
        calls = 0;
        deliveries = 0;
      }
      if (!down) since = undefined;
    },
    state: () => ({
      down: since !== undefined,
      ...(since ? { since } : {}),
      callsWhileDown: calls,
      deliveryCallsWhileDown: deliveries,
    }),
    count(delivery) {
      calls++;
      if (delivery) deliveries++;
    },
  };
};

/**
 * While the sandbox is down: counts the request and answers it 503 with `body`, as the real system's gateway
 * would during maintenance. Returns true when it answered (the caller stops there).
 *
 * @example
 * if (refuseWhileDown(exchange, outage, { delivery: exchange.method === 'POST', body: odataError(...) })) return;
 */
export const refuseWhileDown = (
  exchange: Exchange,
  outage: SandboxOutage,
  answer: { delivery: boolean; body: unknown },
): boolean => {
  if (!outage.isDown()) return false;
  outage.count(answer.delivery);
  exchange.reply(503, answer.body, { 'content-type': 'application/json', 'retry-after': '30' });
  return true;
};

/**
 * Serves `GET /_sandbox/outage` (the state) and `POST /_sandbox/outage` with `{"down": true|false}` (switch,
 * answers the new state). Returns true when the request was one of those.
 *
 * @example
 * if (serveOutageControl(exchange, outage)) return;
 */
export const serveOutageControl = (exchange: Exchange, outage: SandboxOutage): boolean => {
  if (exchange.url.pathname !== '/_sandbox/outage') return false;
  if (exchange.method === 'GET') {
    exchange.reply(200, outage.state());
    return true;
  }
  if (exchange.method !== 'POST') {
    exchange.reply(405, { error: 'use GET or POST on /_sandbox/outage' });
    return true;
  }
  const body = jsonObjectBody(exchange);
  if (typeof body === 'string' || typeof body.down !== 'boolean') {
    exchange.reply(400, { error: 'field down: must be true or false' });
    return true;
  }
  outage.setDown(body.down);
  exchange.reply(200, outage.state());
  return true;
};
