/*
 * Signature Version 4 for the JSON-protocol clients, by the signer the AWS SDK itself uses (@smithy/signature-v4,
 * maintained with the SDK): security code is not written here. What stays here is the shape the clients call
 * (method, host, path, headers, body in; the headers to send out) and a cache of signers.
 */
import { Hash } from '@smithy/core/serde';
import { SignatureV4 } from '@smithy/signature-v4';

/** The credentials a request is signed with (on Lambda: the function role's, from the environment). */
export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

export interface RequestToSign {
  method: string;
  /** Host header value: `host` or `host:port`. */
  host: string;
  path: string;
  /** Headers to sign besides host, x-amz-date and x-amz-security-token; names in any case. */
  headers: Record<string, string>;
  body: string;
  service: string;
  region: string;
  credentials: AwsCredentials;
  date?: Date;
}

/** SHA-256 on node:crypto, as the SDK's own Node clients give their signer. */
const sha256 = Hash.bind(null, 'sha256');

/**
 * One signer per credentials, region and service: a signer keeps the day's signing key, and a container signs
 * thousands of requests with the same one. Bounded: credentials rotate (a role's every few hours).
 */
const signers = new Map<string, SignatureV4>();
const signerFor = ({ credentials, region, service }: RequestToSign): SignatureV4 => {
  const key = [
    credentials.accessKeyId,
    credentials.secretAccessKey,
    credentials.sessionToken,
    region,
    service,
  ].join('\n');
  let signer = signers.get(key);
  if (!signer) {
    // applyChecksum false: the SDK's JSON-protocol clients neither send nor sign x-amz-content-sha256 (S3 does).
    signer = new SignatureV4({
      credentials: { ...credentials },
      region,
      service,
      sha256,
      applyChecksum: false,
    });
    if (signers.size > 20) signers.clear();
    signers.set(key, signer);
  }
  return signer;
};

/**
 * Signs a request with AWS Signature Version 4 (header form, the body hashed), resolving to the headers to send:
 * the given ones plus host, x-amz-date, x-amz-security-token (with a session token) and authorization.
 * Only what the JSON-protocol services need: no query string, no unsigned or streamed payloads.
 *
 * @example
 * const headers = await signRequest({ method: 'POST', host: 'sqs.eu-west-1.amazonaws.com', path: '/',
 *   headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': 'AmazonSQS.SendMessageBatch' },
 *   body, service: 'sqs', region: 'eu-west-1', credentials });
 */
export const signRequest = async (request: RequestToSign): Promise<Record<string, string>> => {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) headers[name.toLowerCase()] = value;
  headers.host = request.host;
  const [hostname, port] = request.host.split(':');
  const signed = await signerFor(request).sign(
    {
      method: request.method,
      protocol: 'https:',
      hostname,
      ...(port ? { port: Number(port) } : {}),
      path: request.path,
      query: {},
      headers,
      body: request.body,
    },
    { signingDate: request.date ?? new Date() },
  );
  return { ...signed.headers };
};
