import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testKeys, useTestKeys } from '../../testkit/apiKeys.ts';
import { jsonPost, lambdaContext } from '../../testkit/factories/apiGateway.ts';
import { npmStart, type RunningService } from '../../testkit/npmStart.ts';
import { bundleFunction } from '../../tools/bundle.ts';

/*
 * `npm start` hands a handler the body as API Gateway does: the text as received. Each body goes to both POSTs
 * through npm start over HTTP, and to the same handler bundled as deployed (scripts/bundle.ts's bundleFunction)
 * with the API Gateway event AWS would give it; both must answer alike, 400 in the operation's error shape. Before
 * local/emulators/serverlessOffline/rawBody.ts, serverless-offline parsed JSON bodies and passed `false` and `0` on as a boolean and a number
 * (500), and `"[]"` as the text `[]` (an empty array of records).
 */

type Handler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

/** The bodies, as sent: JSON texts a schema-driven client sends to probe an API. */
const BODIES = ['false', '0', 'null', '"x"', '"[]"', '[]'];

/** Each POST: its path, its bundled function, the client whose key it carries, its refusal's shape (lib/http/shapes.ts). */
const ROUTES = [
  {
    path: '/erp/sales_registration',
    name: 'salesRegistration',
    client: 'example-dealer',
    key: testKeys.dealer,
    refused: { success: false, message: expect.any(String) },
  },
  {
    path: '/crm/case',
    name: 'crmCase',
    client: 'example-web-forms',
    key: testKeys.webForms,
    refused: expect.stringMatching(/^Create Case failed: /),
  },
];

let service: RunningService;
let dir: string;
const handlers: Record<string, Handler> = {};

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'dealer-gateway-raw-body-'));
  useTestKeys();
  const [running] = await Promise.all([
    npmStart({ DATA_DIR: join(dir, 'data') }),
    ...ROUTES.map(async ({ name }) => {
      const bundle = await bundleFunction(name, `functions/${name}.handler`, join(dir, 'bundles'));
      const file = join(dir, 'bundles', name, 'functions', `${name}.mjs`);
      handlers[name] = (await import(pathToFileURL(file).href)).handler as Handler;
      return bundle;
    }),
  ]);
  service = running as RunningService;
}, 120_000);

afterAll(async () => {
  await service?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** An answer's status and body, the body parsed when it is JSON. */
const answerOf = (status: number, text: string) => {
  try {
    return { status, body: JSON.parse(text) as unknown };
  } catch {
    return { status, body: text };
  }
};

describe('a JSON body that is no object or array of records', () => {
  for (const route of ROUTES) {
    it.for(BODIES)(`POST ${route.path} %s: npm start answers as the deployed handler, 400`, async (body) => {
      // Prepare
      const event = jsonPost(route.path, body, { 'x-api-key': route.key });
      // Act
      const overHttp = await fetch(`${service.url}${route.path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': service.keys[route.client] },
        body,
      });
      const local = answerOf(overHttp.status, await overHttp.text());
      const deployed = await handlers[route.name](event, lambdaContext());
      // Assess
      expect(local).toEqual(answerOf(deployed.statusCode, deployed.body));
      expect(local).toEqual({ status: 400, body: route.refused });
    });
  }
});
