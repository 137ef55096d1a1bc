/**
 * Preloaded (`node --import`) into the serverless-offline child: the handlers get the body as API Gateway's proxy
 * integration hands it over, the text as received (null when empty), whatever it holds.
 *
 * serverless-offline 14 parses a JSON body itself (for request templates and schemas, which a proxy integration never
 * uses), then builds the event's `body` from the parsed value, and goes back to the text only when that value is
 * truthy and not a string. So `false` or `0` reached the handlers as a boolean or a number (a 500 where AWS answers
 * 400), `null` as no body, and a JSON string such as `"[]"` as its content, decoded once too often (`[]`). Declaring
 * every request's payload as not JSON to offline's handler (hapi's `request.mime`, read by nothing else on a proxy
 * route) keeps the text: offline's event then carries it as AWS does. A route with a non-proxy (`lambda`)
 * integration would lose its JSON request template; every `http` event of serverless.yml is a proxy integration.
 */
import { isMainThread } from 'node:worker_threads';
import { assertPatchedVersion } from '../versionGate.ts';

/** What offline's handler sees as the payload's media type: none of the JSON types it parses. */
export const RAW_BODY_MIME = 'application/x-raw-body';

/** The parts of a hapi server and request this touches. */
interface HapiServer {
  ext(
    event: 'onPreHandler',
    method: (request: { mime: string | null }, h: { continue: symbol }) => symbol,
  ): void;
}

/** offline's HttpServer module, the very one offline loads (the package's exports stop at `./lambda`). */
const loadHttpServer = async () => {
  // The exact version whose HttpServer this was written for (local/emulators/versionGate.ts).
  assertPatchedVersion('serverless-offline');
  const entry = import.meta.resolve('serverless-offline');
  return (await import(new URL('./events/http/HttpServer.js', entry).href)).default;
};

/**
 * Keeps every request's body as text for the handler: registers, on each HTTP server offline creates, a step before
 * the route handler that marks the payload as not JSON.
 *
 * @example
 * installRawBody(await loadHttpServer());
 */
export function installRawBody(
  // biome-ignore lint/suspicious/noExplicitAny: serverless-offline ships no types
  HttpServer: { prototype: any },
): void {
  const originalCreate: () => Promise<unknown> = HttpServer.prototype.createServer;
  if (typeof originalCreate !== 'function' || typeof HttpServer.prototype.getServer !== 'function') {
    throw new Error('serverless-offline has no HttpServer#createServer / #getServer to keep raw bodies');
  }
  HttpServer.prototype.createServer = async function createServer(this: { getServer(): HapiServer }) {
    const created = await originalCreate.call(this);
    this.getServer().ext('onPreHandler', (request, h) => {
      request.mime = RAW_BODY_MIME;
      return h.continue;
    });
    return created;
  };
}

if (isMainThread && process.env.LOCAL_STACK_RAW_BODY !== 'off') {
  installRawBody(await loadHttpServer());
}
