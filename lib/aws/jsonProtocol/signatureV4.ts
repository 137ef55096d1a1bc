import { createHash, createHmac } from 'node:crypto';

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

const sha256Hex = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
const hmac = (key: string | Buffer, text: string) => createHmac('sha256', key).update(text, 'utf8').digest();

/** `20261122T035515Z` */
const amzDate = (date: Date) =>
  date
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');

/** Signing keys change once a day per scope; a container signs thousands of requests with the same one. */
const signingKeys = new Map<string, Buffer>();
const signingKey = (secret: string, day: string, region: string, service: string) => {
  const cacheKey = `${secret}\n${day}\n${region}\n${service}`;
  let key = signingKeys.get(cacheKey);
  if (!key) {
    key = hmac(hmac(hmac(hmac(`AWS4${secret}`, day), region), service), 'aws4_request');
    if (signingKeys.size > 20) signingKeys.clear();
    signingKeys.set(cacheKey, key);
  }
  return key;
};

/**
 * Signs a request with AWS Signature Version 4 (header form, the body hashed), returning the headers to send:
 * the given ones plus host, x-amz-date, x-amz-security-token (with a session token) and authorization.
 * Only what the JSON-protocol services need: no query string, no unsigned or streamed payloads.
 *
 * @example
 * const headers = signRequest({ method: 'POST', host: 'sqs.eu-west-1.amazonaws.com', path: '/',
 *   headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': 'AmazonSQS.SendMessageBatch' },
 *   body, service: 'sqs', region: 'eu-west-1', credentials });
 */
export const signRequest = (request: RequestToSign): Record<string, string> => {
  const { credentials, service, region } = request;
  const stamp = amzDate(request.date ?? new Date());
  const day = stamp.slice(0, 8);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) headers[name.toLowerCase()] = value;
  headers.host = request.host;
  headers['x-amz-date'] = stamp;
  if (credentials.sessionToken) headers['x-amz-security-token'] = credentials.sessionToken;

  const names = Object.keys(headers).sort();
  const canonicalHeaders = names
    .map((name) => `${name}:${headers[name].trim().replace(/\s+/g, ' ')}\n`)
    .join('');
  const signedHeaders = names.join(';');
  const canonicalRequest = [
    request.method,
    request.path,
    '',
    canonicalHeaders,
    signedHeaders,
    sha256Hex(request.body),
  ].join('\n');
  const scope = `${day}/${region}/${service}/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', stamp, scope, sha256Hex(canonicalRequest)].join('\n');
  const signature = createHmac('sha256', signingKey(credentials.secretAccessKey, day, region, service))
    .update(stringToSign, 'utf8')
    .digest('hex');
  headers.authorization = `AWS4-HMAC-SHA256 Credential=${credentials.accessKeyId}/${scope}, SignedHeaders=${signedHeaders}, Signature=${signature}`;
  return headers;
};
