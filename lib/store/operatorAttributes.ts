/**
 * The attributes of the records table that hold no personal data: every top-level attribute of a status record
 * (lib/records/types.ts), of a content alias and of a downstream's hold, except `record`, the normalised record with the customer's fields.
 * The operators' role (serverless.yml OperationsRole) may read and write only these (IAM's `dynamodb:Attributes`),
 * and the operators' tools on AWS name exactly these in their reads (ProjectionExpression), so what a person can see
 * on AWS is what the purge would leave (`error` and `history` carry downstream texts with personal data removed).
 */
export const OPERATOR_ATTRIBUTES = [
  'pk',
  'id',
  'kind',
  'status',
  'attempts',
  'tries',
  'callFailures',
  'callFailedAt',
  'loneFailureChance',
  'acceptedAt',
  'updatedAt',
  'owner',
  'test',
  'requestId',
  'traceparent',
  'downstreamId',
  'error',
  'latestGeneration',
  'openKind',
  'dueAt',
  'requeues',
  'requeuedAt',
  'unqueued',
  'answerBy',
  'frameKey',
  'leaseUntil',
  'statusKey',
  'dealer',
  'history',
  'story',
  'webhookStory',
  'pendingEvents',
  'eventSequence',
  'eventsKind',
  'eventsDueAt',
  'purgeKind',
  'purgeAt',
  'personalDataRemovedAt',
  'expiresAt',
  'aliasOf',
  // The event feed's entries (lib/feed): the event, which holds no personal data (its error is redacted).
  'feedClient',
  'feedKey',
  'feedEvent',
  // The downstreams' holds (lib/outage): ids, times and counts only.
  'downstream',
  'held',
  'reason',
  'heldSince',
  'closedAt',
  'probeAt',
  'failures',
  'recentCalls',
  'callsSinceClose',
  'firstFailedRecord',
  'severalRecords',
  'apiUsage',
  'version',
] as const;

/**
 * A ProjectionExpression naming these attributes (each through a placeholder: several are reserved words), with
 * its names, to merge into a read.
 *
 * @example
 * await reader.getItem({ TableName, Key, ...projectionOf(OPERATOR_ATTRIBUTES) });
 */
export const projectionOf = (
  attributes: readonly string[],
): { ProjectionExpression: string; ExpressionAttributeNames: Record<string, string> } => ({
  ProjectionExpression: attributes.map((_, i) => `#p${i}`).join(', '),
  ExpressionAttributeNames: Object.fromEntries(attributes.map((name, i) => [`#p${i}`, name])),
});
