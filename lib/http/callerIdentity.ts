import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { clientOfKey, loadApiKeys } from '../clients/apiKeys.ts';
import { clientNamed, clientsConfig } from '../clients/clientsConfig.ts';
import type { Caller, ClientsConfig } from '../clients/types.ts';
import { RequestRefused } from './errors.ts';

export interface CallerIdentityOptions {
  /** This operation may be posted by a web page of an allowed origin without a key (crm/case only). */
  allowBrowserForms: boolean;
  config: ClientsConfig;
}

const defaults: CallerIdentityOptions = { allowBrowserForms: false, config: clientsConfig };

const callers = new WeakMap<Context, Caller>();

/** The caller the identity middleware found for this invocation. */
export const callerOf = (context: Context): Caller => {
  const caller = callers.get(context);
  if (!caller) throw new Error('callerIdentity middleware did not run');
  return caller;
};

/**
 * Lets in only known callers: a client presenting its key in `x-api-key` (API Gateway also checks keys and
 * applies the client's usage plan on AWS), or, where the operation allows it and configuration enables it, a
 * browser posting from an allowed origin. Anything else: 403 in the operation's shape.
 *
 * @example
 * middy(handler).use(callerIdentity({ allowBrowserForms: true }))
 */
export const callerIdentity = (
  opts: Partial<CallerIdentityOptions> = {},
): MiddlewareObj<APIGatewayProxyEvent> => {
  const { allowBrowserForms, config } = { ...defaults, ...opts };
  return {
    before: async ({ event, context }) => {
      const key = event.headers?.['x-api-key'];
      if (key) {
        const name = clientOfKey(key, await loadApiKeys());
        const client = name === undefined ? undefined : clientNamed(name, config);
        if (!client) throw new RequestRefused(403, 'the x-api-key header does not hold a valid API key');
        callers.set(context, { kind: 'client', client });
        return;
      }
      const origin = event.headers?.origin;
      if (
        allowBrowserForms &&
        config.browserForms.enabled &&
        origin &&
        config.browserForms.allowedOrigins.includes(origin)
      ) {
        callers.set(context, { kind: 'browserForm', origin });
        return;
      }
      throw new RequestRefused(403, 'an API key is required in the x-api-key header');
    },
  };
};
