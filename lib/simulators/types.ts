import type { StatusRecord } from '../records/types.ts';

/** A stored record as a simulator answers it: its id, content and the attempts that reached "the downstream". */
export type SimulatedRecord = Pick<StatusRecord, 'id' | 'record'> & { attempts?: number };
