import type { APIGatewayProxyResult } from 'aws-lambda';
import { expect } from 'vitest';
import { securityHeaderDefaults } from '../lib/http/securityHeaders.ts';

/** The security headers every answer carries, as the contract's tests expect them. */
export const expectedSecurityHeaders = securityHeaderDefaults.headers as Record<string, string>;

/** Asserts the security headers on an answer (names as the service writes them: lower case). */
export const expectSecurityHeaders = (response: APIGatewayProxyResult): void => {
  expect(response.headers).toMatchObject(expectedSecurityHeaders);
};

/** Asserts that no stack trace leaves the service: no `    at ` line anywhere, and `stackTrace` empty if present. */
export const expectNoStackTrace = (response: APIGatewayProxyResult): void => {
  expect(response.body).not.toContain('    at ');
  expect(response.body).not.toMatch(/\bat .*\.(ts|js):\d+/);
  let parsed: unknown;
  try {
    parsed = JSON.parse(response.body);
  } catch {
    return; // plain text (the 5xx of sales registration)
  }
  if (parsed !== null && typeof parsed === 'object' && 'stackTrace' in parsed) {
    expect((parsed as { stackTrace: unknown }).stackTrace).toBe('');
  }
};

/** A refusal of `POST /erp/sales_registration`: the status and exactly `{success: false, message}`. */
export const expectSalesRefusal = (
  response: APIGatewayProxyResult,
  status: number,
  message: string,
): void => {
  expect({ status: response.statusCode, body: JSON.parse(response.body) }).toEqual({
    status,
    body: { success: false, message },
  });
  expect(response.headers?.['content-type']).toBe('application/json');
  expectNoStackTrace(response);
  expectSecurityHeaders(response);
};

/** A refusal of `POST /crm/case`: the status and exactly the JSON string `"Create Case failed: <reason>"`. */
export const expectCaseRefusal = (response: APIGatewayProxyResult, status: number, reason: string): void => {
  expect({ status: response.statusCode, body: JSON.parse(response.body) }).toEqual({
    status,
    body: `Create Case failed: ${reason}`,
  });
  expect(response.headers?.['content-type']).toBe('application/json');
  expectNoStackTrace(response);
  expectSecurityHeaders(response);
};
