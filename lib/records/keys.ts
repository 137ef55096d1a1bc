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
 * The `frame` index's partition key of a case that names a frame number (`frameKey`): one partition per frame number
 * whoever sent the case (web forms post under many owners), trimmed and upper-cased (a person types it into a form).
 * `case:` is no client name (lowercase letters, digits and `-` only), so no sales record's key is ever a case's, and
 * what follows the first `#` is the frame number, as in a sale's key.
 *
 * @example
 * caseFrameKeyOf(' jh2pc4000nk000123 ') // 'case:#JH2PC4000NK000123'
 */
export const caseFrameKeyOf = (frameNo: string): string => `case:#${frameNo.trim().toUpperCase()}`;

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
