import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { clientsConfig } from '../clients/clientsConfig.ts';
import type { ClientsConfig } from '../clients/types.ts';
import { type CallerContext, callerOf } from '../http/callerIdentity.ts';
import { RequestRefusedError } from '../http/errors.ts';
import { controlFieldNames, controlFields } from './controlFields.ts';

/** What a browser form asked for, found by {@link browserFormControls} for one invocation. */
export interface FormControls {
  /** Where to send the browser after an accepted case. */
  successUrl?: URL;
  /** Where to send the browser after a refused case. */
  errorUrl?: URL;
  /** The honeypot field was filled: a bot. The post is answered as if accepted and nothing is kept. */
  honeypot: boolean;
}

/** The Lambda context of `crm/case`: browserFormControls puts what a browser form asked for on it. */
export interface FormControlsContext extends CallerContext {
  /** This invocation's browser form's controls; absent for clients with a key and before parsing. */
  formControls?: FormControls;
}

const notBlank = (value: unknown): boolean =>
  Array.isArray(value)
    ? value.some(notBlank)
    : value !== undefined && value !== null && String(value).trim() !== '';

/** A redirect target: one absolute URL whose origin is allowed (so the service never redirects elsewhere). */
const allowedUrl = (field: string, value: unknown, origins: readonly string[]): URL | undefined => {
  if (value === undefined || value === '') return undefined;
  if (Array.isArray(value)) throw new RequestRefusedError(400, `${field} must be given once`);
  const text = typeof value === 'string' ? value.trim() : '';
  const url = URL.canParse(text) ? new URL(text) : undefined;
  if (!url || !origins.includes(url.origin)) {
    throw new RequestRefusedError(400, `${field} must be an absolute URL on an allowed origin`);
  }
  return url;
};

export interface BrowserFormControlsOptions {
  config: ClientsConfig;
}

/**
 * After the body parsers: takes the control fields (see controlFields.ts) out of the body of every post, so
 * they are never validated, stored or forwarded, and for a browser form (a key-less post from an allowed
 * origin) puts what they asked for on the context (`context.formControls`):
 *
 * - `_success_url`, `_error_url`: each must be an absolute URL on one of `browserForms.allowedOrigins`, else
 *   **400**; browserFormAnswers then answers with a 303 redirect there;
 * - the honeypot (`website`) filled: caseRequest answers as if the case were accepted and keeps nothing.
 *
 * A client with a key gets JSON answers whatever control fields it sends.
 *
 * @example
 * middy(handler).use(callerIdentity({ allowBrowserForms: true })).use(httpUrlencodeBodyParser()).use(browserFormControls())
 */
export const browserFormControls = (
  opts: Partial<BrowserFormControlsOptions> = {},
): MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult, Error, FormControlsContext> => {
  const { config } = { config: clientsConfig, ...opts };
  return {
    before: ({ event, context }) => {
      const body = event.body as unknown;
      if (body === null || typeof body !== 'object' || Array.isArray(body)) return;
      const fields = body as Record<string, unknown>;
      const sent = Object.fromEntries(controlFieldNames.map((name) => [name, fields[name]]));
      for (const name of controlFieldNames) delete fields[name];

      if (callerOf(context).kind !== 'browserForm') return;
      const origins = config.browserForms.allowedOrigins;
      context.formControls = {
        successUrl: allowedUrl(controlFields.successUrl, sent[controlFields.successUrl], origins),
        errorUrl: allowedUrl(controlFields.errorUrl, sent[controlFields.errorUrl], origins),
        honeypot: notBlank(sent[controlFields.honeypot]),
      };
    },
  };
};
