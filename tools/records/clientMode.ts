/**
 * `npm run records -- --mode test|live`: test clients' records (docs/API.md, "Test mode") or live ones. A record
 * says it with its `test` attribute; the `status` index projects no `test` (a deployed index's projection cannot
 * change in place), so a listing or a count through it narrows by owner instead: the clients whose `mode` in
 * config/clients.json is `test`, whose records intake marks `test` (and a live listing is everyone else's, browser
 * forms included). Where the record itself is read (--frame, one record by id) its own `test` attribute decides.
 */
import type { ClientMode, ClientsConfig } from '../../lib/clients/types.ts';
import type { StatusRecord } from '../../lib/records/types.ts';
import type { StatusQueryOptions } from '../../lib/store/statusIndex.ts';

/**
 * The names of the configured clients in test mode.
 *
 * @example
 * testClientNames(clientsConfig) // ['example-dealer-test']
 */
export const testClientNames = (config: Pick<ClientsConfig, 'clients'>): string[] =>
  config.clients.filter((client) => client.mode === 'test').map((client) => client.name);

/**
 * The owner narrowing of a `status` index look-up for --mode: `ownersIn` the test clients for `test` (an empty
 * list, matching nothing, when there are none), `ownersNotIn` them for `live`; nothing without --mode.
 *
 * @example
 * modeNarrowing('test', clientsConfig) // { ownersIn: ['example-dealer-test'] }
 * modeNarrowing('live', clientsConfig) // { ownersNotIn: ['example-dealer-test'] }
 */
export const modeNarrowing = (
  mode: ClientMode | undefined,
  config: Pick<ClientsConfig, 'clients'>,
): Pick<StatusQueryOptions, 'ownersIn' | 'ownersNotIn'> => {
  if (mode === undefined) return {};
  const testClients = testClientNames(config);
  return mode === 'test' ? { ownersIn: testClients } : { ownersNotIn: testClients };
};

/**
 * Whether a record read in full (or in the operators' attributes, which include `test`) is of the mode asked for.
 *
 * @example
 * ofMode({ test: true }, 'test') // true
 * ofMode({}, 'test') // false
 * ofMode({}, undefined) // true
 */
export const ofMode = (record: Pick<StatusRecord, 'test'>, mode: ClientMode | undefined): boolean =>
  mode === undefined || (record.test === true) === (mode === 'test');
