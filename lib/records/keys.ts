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
