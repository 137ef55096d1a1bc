import { DOWNSTREAM_OF_KIND } from '../../lib/outage/constants.ts';
import { holdStates } from '../../lib/outage/hold.ts';
import type { Downstream, HoldState } from '../../lib/outage/types.ts';
import type { TableReader } from '../../lib/store/statusIndex.ts';
import type { RecordsOptions } from './types.ts';

/** The hold of each downstream whose kind `--counts` counted (sales: erp, cases: crm). */
export type CountedHolds = Partial<Record<Downstream, HoldState>>;

/**
 * Whether the downstreams of the kinds counted are held, why, since when and when the next probe may go: the hold
 * items `hold#erp` / `hold#crm`, read consistently through the script's reader (one GetItem each).
 *
 * @example
 * await countedHolds(options, source.reader) // { erp: { held: true, reason: 'outage', heldSince: '…', nextProbeAt: '…' }, crm: { held: false } }
 */
export const countedHolds = async (
  options: Pick<RecordsOptions, 'kinds'>,
  reader: TableReader,
): Promise<CountedHolds> => {
  const states = await holdStates({ reader });
  const holds: CountedHolds = {};
  for (const kind of options.kinds) holds[DOWNSTREAM_OF_KIND[kind]] = states[DOWNSTREAM_OF_KIND[kind]];
  return holds;
};
