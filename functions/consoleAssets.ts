import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { consoleAssetAnswer } from '../lib/console/consoleAssets.ts';
import { consoleShape } from '../lib/console/errorShape.ts';
import { contractErrors } from '../lib/http/contractErrors.ts';

/**
 * `GET /console/`, `/console/callback`, `/console/assets/*`: the operations console's page, script and stylesheet
 * (lib/console/consoleAssets.ts), each with its own caching and the page's Content-Security-Policy. A function of
 * its own, apart from consoleApi: it needs no token, no AWS permission but its logs, and its bundle carries the
 * console's files instead of the API's code.
 */
export const handler = middy<APIGatewayProxyEvent, APIGatewayProxyResult>()
  .use(contractErrors({ shape: consoleShape }))
  .handler(async (event) => consoleAssetAnswer(event));
