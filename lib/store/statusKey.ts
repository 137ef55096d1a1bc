import type { RecordKind } from '../types.ts';
import type { RecordStatus } from './types.ts';

/**
 * The global secondary index of every status record by kind and state: partition key `statusKey`
 * (`<kind>#<status>`, kept in step with `status` by every write that changes it), sort key `acceptedAt`. Operations
 * list and count records by state through it, never by a scan.
 */
export const STATUS_INDEX = 'status';

/**
 * The partition key of the `status` index: kind and state.
 *
 * @example
 * statusKeyOf('salesRegistration', 'failed') // 'salesRegistration#failed'
 */
export const statusKeyOf = (kind: RecordKind, status: RecordStatus): string => `${kind}#${status}`;
