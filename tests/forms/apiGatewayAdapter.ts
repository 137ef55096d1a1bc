import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { lambdaContext } from '../../testkit/factories/apiGateway.ts';
import { readBody } from '../../testkit/readBody.ts';

type Handler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

/** A route of the adapter: method and resource path (no path parameters needed here). */
export type Routes = Record<string, Handler>;

/** A Node request as API Gateway (REST, Lambda proxy integration) hands it to a handler. */
export const toApiGatewayEvent = (
  req: IncomingMessage,
  body: Buffer,
  resource: string,
): APIGatewayProxyEvent => {
  const url = new URL(req.url ?? '/', 'http://adapter.invalid');
  const multiValueHeaders: Record<string, string[]> = {};
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i];
    multiValueHeaders[name] = [...(multiValueHeaders[name] ?? []), req.rawHeaders[i + 1]];
  }
  const headers = Object.fromEntries(Object.entries(multiValueHeaders).map(([k, v]) => [k, v.join(',')]));
  const query: Record<string, string[]> = {};
  for (const [k, v] of url.searchParams) query[k] = [...(query[k] ?? []), v];
  const hasQuery = Object.keys(query).length > 0;
  return {
    resource,
    path: url.pathname,
    httpMethod: req.method ?? 'GET',
    headers,
    multiValueHeaders,
    queryStringParameters: hasQuery
      ? Object.fromEntries(Object.entries(query).map(([k, v]) => [k, v[v.length - 1]]))
      : null,
    multiValueQueryStringParameters: hasQuery ? query : null,
    pathParameters: null,
    stageVariables: null,
    // Text media types (forms, JSON) arrive as text, as API Gateway passes them without binaryMediaTypes.
    body: body.length > 0 ? body.toString('utf8') : null,
    isBase64Encoded: false,
    requestContext: {
      requestId: randomUUID(),
      resourcePath: resource,
      httpMethod: req.method ?? 'GET',
      path: url.pathname,
      identity: { sourceIp: req.socket.remoteAddress ?? '127.0.0.1' },
    } as APIGatewayProxyEvent['requestContext'],
  };
};

const send = (res: ServerResponse, result: APIGatewayProxyResult) => {
  const headers: Record<string, string | string[]> = { ...(result.headers as Record<string, string>) };
  for (const [k, v] of Object.entries(result.multiValueHeaders ?? {})) headers[k] = v.map(String);
  res.writeHead(result.statusCode, headers);
  res.end(result.isBase64Encoded ? Buffer.from(result.body, 'base64') : result.body);
};

/**
 * A small local stand-in for API Gateway: an HTTP server on 127.0.0.1 that turns each request into a REST
 * proxy event, invokes the handler of its route (`'POST /crm/case'`) and writes its answer back.
 *
 * @example
 * const api = await startApiGatewayAdapter({ 'POST /crm/case': crmCaseHandler(config) });
 */
export const startApiGatewayAdapter = async (routes: Routes) => {
  const server = createServer(async (req, res) => {
    try {
      const body = await readBody(req);
      const path = new URL(req.url ?? '/', 'http://adapter.invalid').pathname;
      const handler = routes[`${req.method} ${path}`];
      if (!handler) {
        send(res, {
          statusCode: 404,
          headers: { 'content-type': 'application/json' },
          body: '{"message":"Not Found"}',
        });
        return;
      }
      send(res, await handler(toApiGatewayEvent(req, body, path), lambdaContext()));
    } catch {
      send(res, {
        statusCode: 502,
        headers: { 'content-type': 'application/json' },
        body: '{"message":"Internal server error"}',
      });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
};
