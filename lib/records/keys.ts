import type { RecordKind } from '../types.ts';
import type { RecordStatus } from './types.ts';

/**
 * The partition key of the `status` index (`statusKey`): kind and state, kept in step with `status` by every
 * write that changes it.
 *
 * @example
 * statusKeyOf('salesRegistration', 'failed') // 'salesRegistration#failed'
 */
export const statusKeyOf = (kind: RecordKind, status: RecordStatus): string => `${kind}#${status}`;

/**
 * The `frame` index's partition key of a sales record (`frameKey`): its owner and its (trimmed) frame number.
 * Client names hold no `#` (config/clients.json), so the key names one owner and one frame.
 *
 * @example
 * frameKeyOf('example-dealer', 'TESTFRAME00000001') // 'example-dealer#TESTFRAME00000001'
 */
export const frameKeyOf = (owner: string, frameNum: string): string => `${owner}#${frameNum}`;

/**
 * The `open` index's partition key of an `accepted` record (`openKind`): its kind for a live record, `<kind>#test`
 * for a test record, so that the reconciler reads live records without any test record among them (a held
 * downstream's probe is always a live record: lib/delivery/isolation.ts `mayProbe`, `openPartitions`). Records
 * written before test records had a partition of their own carry their kind whatever their mode; the reconciler
 * still finds them there.
 *
 * @example
 * openKindOf('salesRegistration', true) // 'salesRegistration#test'
 */
export const openKindOf = (kind: RecordKind, test?: boolean): string => (test ? `${kind}#test` : kind);
