import type { MiddlewareObj, Request } from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { clientsConfig } from '../clients/clientsConfig.ts';
import type { ClientsConfig } from '../clients/types.ts';
import type { FormControls, FormControlsContext } from './browserFormControls.ts';

/** Long enough for every reason a case is refused for, short enough for any browser's address bar. */
const MAX_REASON_LENGTH = 1500;

const CASE_REFUSED = 'Create Case failed: ';

/** The reason in a `crm/case` error answer: `"Create Case failed: <reason>"` or `{error, details}`. */
const reasonOf = (response: APIGatewayProxyResult): string => {
  let body: unknown;
  try {
    body = JSON.parse(response.body);
  } catch {
    body = undefined;
  }
  const reason =
    typeof body === 'string'
      ? body.startsWith(CASE_REFUSED)
        ? body.slice(CASE_REFUSED.length)
        : body
      : body && typeof body === 'object' && 'error' in body
        ? [(body as { error: unknown }).error, (body as { details?: unknown }).details]
            .filter(Boolean)
            .join('. ')
        : 'the case could not be created';
  return reason.length > MAX_REASON_LENGTH ? `${reason.slice(0, MAX_REASON_LENGTH - 1)}…` : reason;
};

/** `url` with one more query parameter, percent-encoded (spaces as %20, which every decoder reads back). */
const withParameter = (url: URL, name: string, value: string): string => {
  const target = new URL(url);
  const query = target.search ? `${target.search}&` : '?';
  target.search = `${query}${name}=${encodeURIComponent(value)}`;
  return target.href;
};

/** The 303 that sends the browser to the form's thank-you or error page, or undefined to answer as usual. */
const redirectOf = (
  response: APIGatewayProxyResult,
  controls: FormControls | undefined,
): APIGatewayProxyResult | undefined => {
  if (!controls) return undefined;
  let location: string | undefined;
  if (response.statusCode === 200 && controls.successUrl) {
    const crmId = (JSON.parse(response.body) as { CrmId?: unknown }).CrmId;
    if (typeof crmId === 'string') location = withParameter(controls.successUrl, 'CrmId', crmId);
  } else if (response.statusCode >= 400 && controls.errorUrl) {
    location = withParameter(controls.errorUrl, 'reason', reasonOf(response));
  }
  if (!location) return undefined;
  const headers = Object.fromEntries(
    Object.entries(response.headers ?? {}).filter(
      ([name]) => !['content-type', 'retry-after'].includes(name),
    ),
  );
  return {
    statusCode: 303,
    headers: { ...headers, location, 'content-type': 'text/plain; charset=utf-8' },
    body: '',
  };
};

const headerOf = (event: APIGatewayProxyEvent, name: string): string | undefined =>
  Object.entries(event.headers ?? {}).find(([key]) => key.toLowerCase() === name)?.[1];

/**
 * CORS on the answer for a page of an allowed origin (browser forms enabled): `Access-Control-Allow-Origin`
 * echoes that origin, never any other, and `Vary: Origin` keeps caches from mixing origins up. The preflight
 * (`OPTIONS /crm/case`) is answered by API Gateway (serverless-offline locally) from the same configuration.
 */
const withCors = (
  response: APIGatewayProxyResult,
  event: APIGatewayProxyEvent,
  config: ClientsConfig,
): APIGatewayProxyResult => {
  const origin = headerOf(event, 'origin');
  if (!config.browserForms.enabled || !origin || !config.browserForms.allowedOrigins.includes(origin)) {
    return response;
  }
  const headers = { ...response.headers };
  const vary = Object.entries(headers).find(([name]) => name.toLowerCase() === 'vary');
  if (vary) delete headers[vary[0]];
  return {
    ...response,
    headers: {
      ...headers,
      'access-control-allow-origin': origin,
      vary: vary ? `${vary[1]}, Origin` : 'Origin',
    },
  };
};

export interface BrowserFormAnswersOptions {
  config: ClientsConfig;
}

/**
 * Turns the final answer of `crm/case` (after every other middleware, error answers included) into one a person
 * who submitted a web form can land on: when the form named `_success_url`, an accepted case becomes **303**
 * to it with `?CrmId=<id>`; when it named `_error_url`, any refusal or failure becomes **303** to it with
 * `?reason=<url-encoded reason>` (browserFormControls put the form's controls on the context). Without them,
 * and for clients with a key, answers stay as they are. Adds CORS for allowed origins to every answer.
 *
 * Use it first: middy runs `after` and `onError` in reverse order of `use`, so it then sees the answer
 * contractErrors and securityHeaders made.
 *
 * @example
 * middy().use(browserFormAnswers()).use(httpHeaderNormalizer()).use(securityHeaders()).use(contractErrors(…))…
 */
export const browserFormAnswers = (
  opts: Partial<BrowserFormAnswersOptions> = {},
): MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult, Error, FormControlsContext> => {
  const { config } = { config: clientsConfig, ...opts };
  const answer = (
    request: Request<APIGatewayProxyEvent, APIGatewayProxyResult, Error, FormControlsContext>,
  ) => {
    const { event, context, response } = request;
    if (!response) return;
    request.response = withCors(redirectOf(response, context.formControls) ?? response, event, config);
  };
  return { after: answer, onError: answer };
};
