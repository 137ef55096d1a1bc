/**
 * `npm run records -- --client <name>`: a name the configuration does not know is most often a misspelt one, whose
 * empty listing would pass for "no records". It cannot be refused on the name alone: records are kept under their
 * owner's name after the client is removed from config/clients.json, and a stage may have been deployed from a
 * checkout whose configuration differs from the one the operator runs the tool in. So a client is unknown when
 * neither the configuration names it nor any record of it was found: then the tool says so (exit code 2).
 */
import { clientsConfig } from '../../lib/clients/clientsConfig.ts';
import { type ClientsConfig, callerName } from '../../lib/clients/types.ts';
import { UsageError } from './errors.ts';

/**
 * The owners the configuration knows: each client, and the browser forms of each allowed origin (their records'
 * owner is `browser-form:<origin>`).
 *
 * @example
 * configuredOwners(clientsConfig) // ['example-dealer', 'example-web-forms', 'example-dealer-test', 'browser-form:https://www.example.com']
 */
export const configuredOwners = (config: ClientsConfig = clientsConfig): string[] => [
  ...config.clients.map((client) => client.name),
  ...config.browserForms.allowedOrigins.map((origin) => callerName({ kind: 'browserForm', origin })),
];

/** Whether the configuration names the owner. */
export const isConfigured = (owner: string, config: ClientsConfig = clientsConfig): boolean =>
  configuredOwners(config).includes(owner);

/**
 * The refusal of a --client that the configuration does not name and of which nothing was found.
 *
 * @example
 * throw unknownClient('exmaple-dealer') // --client "exmaple-dealer" is no client of config/clients.json (...) and no record of it was found
 */
export const unknownClient = (owner: string, config: ClientsConfig = clientsConfig): UsageError =>
  new UsageError(
    `--client "${owner}" is no client of config/clients.json (${config.clients.map((c) => c.name).join(', ')}) ` +
      'and no record of it was found: a misspelt name? (A client removed from the configuration keeps its records, ' +
      'which are listed when they match.)',
  );

/** The note on stderr when records of an owner the configuration does not name were found. */
export const unconfiguredNote = (owner: string): string =>
  `npm run records: "${owner}" is no client of config/clients.json; its records are listed all the same\n`;
