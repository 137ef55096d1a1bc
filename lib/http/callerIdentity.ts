import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { clientOfKey, loadApiKeys } from '../clients/apiKeys.ts';
import { clientNamed, clientsConfig } from '../clients/clientsConfig.ts';
import type { Caller, ClientsConfig } from '../clients/types.ts';
import { RequestRefusedError } from './errors.ts';

export interface CallerIdentityOptions {
  /** This operation may be posted by a web page of an allowed origin without a key (crm/case only). */
  allowBrowserForms: boolean;
  config: ClientsConfig;
}

const defaults: CallerIdentityOptions = { allowBrowserForms: false, config: clientsConfig };

/**
 * The Lambda context of an operation that uses callerIdentity: the middleware puts the caller it let in on
 * `request.context`, the context middy then hands to the handler. Optional in the type because the Lambda
 * runtime (or a test) calls the function with a plain Context; read it with {@link callerOf}.
 */
export interface CallerContext extends Context {
  caller?: Caller;
}

/**
 * The caller callerIdentity put on this invocation's context.
 *
 * @throws when callerIdentity did not run before (a chain without it).
 */
export const callerOf = (context: CallerContext): Caller => {
  if (!context.caller) throw new Error('callerIdentity middleware did not run');
  return context.caller;
};

/**
 * Lets in only known callers and puts the caller on the context (`context.caller`): a client presenting its
 * key in `x-api-key` (API Gateway also checks keys and applies the client's usage plan on AWS), or, where the
 * operation allows it and configuration enables it, a browser posting from an allowed origin. Anything else:
 * 403 in the operation's shape.
 *
 * @example
 * middy(handler).use(callerIdentity({ allowBrowserForms: true }))
 */
export const callerIdentity = (
  opts: Partial<CallerIdentityOptions> = {},
): MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult, Error, CallerContext> => {
  const { allowBrowserForms, config } = { ...defaults, ...opts };
  return {
    before: async ({ event, context }) => {
      const key = event.headers?.['x-api-key'];
      if (key) {
        const name = clientOfKey(key, await loadApiKeys());
        const client = name === undefined ? undefined : clientNamed(name, config);
        if (!client) throw new RequestRefusedError(403, 'the x-api-key header does not hold a valid API key');
        context.caller = { kind: 'client', client };
        return;
      }
      const origin = event.headers?.origin;
      if (
        allowBrowserForms &&
        config.browserForms.enabled &&
        origin &&
        config.browserForms.allowedOrigins.includes(origin)
      ) {
        context.caller = { kind: 'browserForm', origin };
        return;
      }
      throw new RequestRefusedError(403, 'an API key is required in the x-api-key header');
    },
  };
};
