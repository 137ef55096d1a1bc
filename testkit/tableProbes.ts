/**
 * Requests no function makes, for asking a role what else it would allow on the records table
 * (tests/deploy/roles.test.ts): an item operation on a key of each shape, and every way of reading a record's
 * personal fields (`record`, the customer's fields as sent).
 */
import type { IamRequest } from './iamPolicy.ts';
import { KEY_SHAPES, keyShapeOf } from './keyShapes.ts';

/** The item operations of DynamoDB, each authorised on the table with the item's key as its leading key. */
export const ITEM_ACTIONS = [
  'dynamodb:GetItem',
  'dynamodb:BatchGetItem',
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:DeleteItem',
] as const;

const READS = new Set(['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query', 'dynamodb:Scan']);

/** The attribute of a status record that holds the customer's fields (lib/records/types.ts). */
export const PERSONAL_ATTRIBUTE = 'record';

/** A probe: the request, and the key shape it names (for failure messages). */
export type Probe = IamRequest & { shape: string };

/**
 * The mildest request of each item action on a key of each shape: the key alone read or written, nothing returned.
 * A role that allows one may touch items of that shape.
 *
 * @example
 * keyShapeProbes(tableArn).filter((probe) => isAllowed(statements, probe)).map((p) => `${p.action} ${p.shape}`);
 */
export const keyShapeProbes = (tableArn: string): Probe[] =>
  KEY_SHAPES.flatMap((shape) =>
    ITEM_ACTIONS.map((action) => ({
      action,
      resource: tableArn,
      shape: shape.name,
      context: {
        'dynamodb:LeadingKeys': [shape.example],
        'dynamodb:Attributes': ['pk'],
        ...(READS.has(action)
          ? { 'dynamodb:Select': ['SPECIFIC_ATTRIBUTES'] }
          : { 'dynamodb:ReturnValues': ['NONE'] }),
      },
    })),
  );

const recordId = KEY_SHAPES[0].example;

/**
 * Every request that would return a record's `record`: reads of the whole item or naming it (GetItem, BatchGetItem,
 * a Query of the table by id, a Scan), writes returning the item as it was or became, an update returning the
 * `record` it sets; and reads of each index that projects it (`indexArns`: none of the template's does).
 *
 * @example
 * personalFieldReads(tableArn, []).filter((probe) => isAllowed(statements, probe));
 */
export const personalFieldReads = (tableArn: string, indexArns: readonly string[]): Probe[] => {
  const keyed = { 'dynamodb:LeadingKeys': [recordId] };
  const shape = 'record id';
  const reads = ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query'].flatMap((action) =>
    [
      { 'dynamodb:Attributes': ['pk'], 'dynamodb:Select': ['ALL_ATTRIBUTES'] },
      { 'dynamodb:Attributes': ['pk', PERSONAL_ATTRIBUTE], 'dynamodb:Select': ['SPECIFIC_ATTRIBUTES'] },
    ].map((context) => ({ action, resource: tableArn, shape, context: { ...keyed, ...context } })),
  );
  const writes = ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem'].flatMap((action) =>
    ['ALL_OLD', 'ALL_NEW'].map((returned) => ({
      action,
      resource: tableArn,
      shape,
      context: { ...keyed, 'dynamodb:Attributes': ['pk'], 'dynamodb:ReturnValues': [returned] },
    })),
  );
  return [
    ...reads,
    {
      action: 'dynamodb:Scan',
      resource: tableArn,
      shape: 'any',
      context: { 'dynamodb:Select': ['ALL_ATTRIBUTES'] },
    },
    ...writes,
    {
      action: 'dynamodb:UpdateItem',
      resource: tableArn,
      shape,
      context: {
        ...keyed,
        'dynamodb:Attributes': ['pk', PERSONAL_ATTRIBUTE],
        'dynamodb:ReturnValues': ['UPDATED_NEW'],
      },
    },
    ...indexArns.flatMap((resource) =>
      ['dynamodb:Query', 'dynamodb:Scan'].map((action) => ({
        action,
        resource,
        shape: 'any',
        context: { 'dynamodb:Select': ['ALL_PROJECTED_ATTRIBUTES'] },
      })),
    ),
  ];
};

/**
 * Whether a request a function made returned some record's `record`: a read of a record id's whole item or naming
 * `record`, or a write of a record id returning the whole item.
 *
 * @example
 * recorded.some(readsPersonalFields) // true for the delivery workers, which send the fields
 */
export const readsPersonalFields = (request: IamRequest): boolean => {
  const context = request.context ?? {};
  const ofRecords = (context['dynamodb:LeadingKeys'] ?? []).some((key) => keyShapeOf(key) === 'record id');
  if (!ofRecords) return false;
  const named = (context['dynamodb:Attributes'] ?? []).includes(PERSONAL_ATTRIBUTE);
  if (READS.has(request.action))
    return named || (context['dynamodb:Select'] ?? []).includes('ALL_ATTRIBUTES');
  return (context['dynamodb:ReturnValues'] ?? []).some(
    (returned) =>
      returned === 'ALL_OLD' || returned === 'ALL_NEW' || (named && returned.startsWith('UPDATED_')),
  );
};
