import type { ErpConfig } from './types.ts';

/** The two URLs the adapter calls, with `sap-client` already applied. */
export interface ErpEndpoints {
  /** The entity set: delivery POSTs go here. */
  entitySet: URL;
  /** The service root (entity set path without its last segment): CSRF token fetches go here. */
  serviceRoot: URL;
  /** `{service root}$batch`: several registrations in one call. */
  batch: URL;
  /** The entity set's name, the relative URL of a POST inside a `$batch` change set. */
  entitySetName: string;
}

/**
 * Builds the adapter's URLs; a path prefix in `baseUrl` is kept.
 *
 * @example
 * erpEndpoints({ baseUrl: 'https://erp.example.com', servicePath: '/sap/opu/odata/sap/Z_SRV/RegSet',
 *   username: 'u', password: 'p', sapClient: '100' }).serviceRoot.href;
 * // 'https://erp.example.com/sap/opu/odata/sap/Z_SRV/?sap-client=100'
 */
export function erpEndpoints(config: ErpConfig): ErpEndpoints {
  const base = new URL(config.baseUrl);
  const prefix = base.pathname.replace(/\/+$/, '');
  const servicePath = `/${config.servicePath.replace(/^\/+|\/+$/g, '')}`;
  const entityPath = `${prefix}${servicePath}`;
  // The trailing slash is kept: `/…/ZSD_SALES_REGISTRATION_SRV/` is the OData service document.
  const rootPath = entityPath.slice(0, entityPath.lastIndexOf('/') + 1);
  const entitySet = new URL(entityPath, base.origin);
  const serviceRoot = new URL(rootPath, base.origin);
  const batch = new URL(`${rootPath}$batch`, base.origin);
  if (config.sapClient) {
    for (const url of [entitySet, serviceRoot, batch]) url.searchParams.set('sap-client', config.sapClient);
  }
  return { entitySet, serviceRoot, batch, entitySetName: entityPath.slice(rootPath.length) };
}

/**
 * The Basic authentication header value; sent on every request, SAP checks it each time.
 *
 * @example
 * basicAuthorization('user', 'secret'); // 'Basic dXNlcjpzZWNyZXQ='
 */
export function basicAuthorization(username: string, password: string): string {
  return `Basic ${Buffer.from(`${username}:${password}`, 'utf8').toString('base64')}`;
}
