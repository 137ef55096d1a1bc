import type { APIGatewayProxyResult } from 'aws-lambda';

/** A JSON answer. Answers carry ids and personal data echoes never, but are never cached either. */
export const jsonResponse = (
  statusCode: number,
  body: unknown,
  headers: Record<string, string> = {},
): APIGatewayProxyResult => ({
  statusCode,
  headers: { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers },
  body: JSON.stringify(body),
});

/** A plain-text answer. */
export const textResponse = (
  statusCode: number,
  body: string,
  headers: Record<string, string> = {},
): APIGatewayProxyResult => ({
  statusCode,
  headers: { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store', ...headers },
  body,
});
