import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { consoleAuthSettings } from '../settings/settings.ts';
import { bearerTokenOf } from './bearer.ts';
import { verifyIdToken } from './idToken.ts';
import type { ConsolePerson } from './types.ts';

/** The Lambda context of a console API call once consoleSession let it in: the person, read with {@link personOf}. */
export interface ConsoleContext extends Context {
  person?: ConsolePerson;
}

/**
 * The person consoleSession put on this invocation's context.
 *
 * @throws when consoleSession did not run before (a chain without it).
 */
export const personOf = (context: ConsoleContext): ConsolePerson => {
  if (!context.person) throw new Error('consoleSession middleware did not run');
  return context.person;
};

/**
 * Lets in only a request with a valid session: an ID token in `Authorization: Bearer` that the console's provider
 * signed for the console's client (lib/console/idToken.ts), and puts its person on the context. Anything else is
 * refused 401 before any route is looked up, so nothing of the API shows without a session.
 *
 * @example
 * middy(handler).use(httpHeaderNormalizer()).use(consoleSession())
 */
export const consoleSession = (): MiddlewareObj<
  APIGatewayProxyEvent,
  APIGatewayProxyResult,
  Error,
  ConsoleContext
> => ({
  before: async ({ event, context }) => {
    const token = bearerTokenOf(event.headers);
    const { issuer, clientId } = consoleAuthSettings();
    context.person = await verifyIdToken(token, { issuer, audience: clientId });
  },
});
