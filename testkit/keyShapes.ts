/**
 * The shapes of the records table's partition keys (`pk`), as the code writes them: what each role's
 * `dynamodb:LeadingKeys` conditions (serverless.yml, deploy/webhooks.cjs) let a function reach, and what
 * tests/deploy/roles.test.ts compares with the keys each function's calls name.
 */

/** One shape of key: its name, how to recognise it, and a key of that shape a probe may name. */
export interface KeyShape {
  name: string;
  matches: (pk: string) => boolean;
  example: string;
}

/**
 * Every shape, each from the module that makes it: a record id (lib/records/recordId.ts: 32 lower-case hex
 * characters, also the places of later generations and content aliases), a downstream's hold
 * (lib/outage/constants.ts), an idempotency entry (lib/store/idempotencyEntries.ts), an event feed entry
 * (lib/feed/feedKey.ts), a client's webhook flag (lib/webhooks/disabledWebhooks.ts) and a console audit entry
 * (lib/store/auditLog.ts).
 */
export const KEY_SHAPES: readonly KeyShape[] = [
  {
    name: 'record id',
    matches: (pk) => /^[0-9a-f]{32}$/.test(pk),
    example: '0123456789abcdef0123456789abcdef',
  },
  { name: 'hold#erp', matches: (pk) => pk === 'hold#erp', example: 'hold#erp' },
  { name: 'hold#crm', matches: (pk) => pk === 'hold#crm', example: 'hold#crm' },
  {
    name: 'idem#<kind>#<key hash>',
    matches: (pk) => /^idem#(salesRegistration|caseRecord)#[0-9a-f]+$/.test(pk),
    example: `idem#caseRecord#${'ab'.repeat(32)}`,
  },
  {
    name: 'feed#<event id>',
    matches: (pk) => pk.startsWith('feed#'),
    example: `feed#${'cd'.repeat(16)}:2026-11-22T08:03:12.345Z`,
  },
  {
    name: 'webhook#<client>',
    matches: (pk) => pk.startsWith('webhook#'),
    example: 'webhook#example-dealer',
  },
  {
    name: 'audit#<at>#<random>',
    matches: (pk) => pk.startsWith('audit#'),
    example: 'audit#2026-11-22T08:03:12.345Z#0123456789ab',
  },
];

/**
 * The name of a key's shape, or `other: <key>` for a key of no known shape (a test then names it).
 *
 * @example
 * keyShapeOf('hold#erp') // 'hold#erp'
 * keyShapeOf('feed#3f0c…:2026-11-22T08:03:12.345Z') // 'feed#<event id>'
 */
export const keyShapeOf = (pk: string): string =>
  KEY_SHAPES.find((shape) => shape.matches(pk))?.name ?? `other: ${pk}`;
