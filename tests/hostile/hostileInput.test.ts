import { gzipSync } from 'node:zlib';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { handler as caseHandler } from '../../functions/crmCase.ts';
import { handler as salesHandler } from '../../functions/salesRegistration.ts';
import { expectCaseRefusal, expectNoStackTrace, expectSalesRefusal } from '../../testkit/answers.ts';
import { jsonPost, lambdaContext } from '../../testkit/factories/apiGateway.ts';
import { caseInput, salesRegistrationInput, uniqueFrame } from '../../testkit/factories/records.ts';
import { isolatedAws } from '../../testkit/isolatedAws.ts';

/*
 * Hostile input, item by item: each is answered in the operation's contract shape with 400, 413 or 415, never
 * 500, never a stack trace, and nothing reaches a queue. The decisions (status and wording) are documented in
 * lib/http/rawBodyGuard.ts, lib/http/contentTypeGuard.ts, lib/http/jsonStructure.ts and lib/validation.
 */

const SALES = '/erp/sales_registration';
const CASE = '/crm/case';
const FORM = 'application/x-www-form-urlencoded';

let aws: Awaited<ReturnType<typeof isolatedAws>>;
let queues: string[];

beforeAll(async () => {
  aws = await isolatedAws();
  queues = [aws.resources.queues.SalesRegistrationQueue.url, aws.resources.queues.CaseQueue.url];
});

beforeEach(async () => {
  for (const queue of queues) await aws.drain(queue);
});

/** Every message on either queue now (and takes them off). */
const queued = async () => (await Promise.all(queues.map((queue) => aws.drain(queue)))).flat();

const sales = (event: APIGatewayProxyEvent) => salesHandler(event, lambdaContext());
const cases = (event: APIGatewayProxyEvent) => caseHandler(event, lambdaContext());

/** A POST of raw text with the given Content-Type (and a valid key). */
const rawPost = (path: string, body: string, contentType: string, headers: Record<string, string> = {}) =>
  jsonPost(path, body, { 'Content-Type': contentType, ...headers });

/** A POST whose body API Gateway hands over base64-encoded (binary media types, or any body on HTTP APIs). */
const base64Post = (path: string, bytes: Buffer, contentType = 'application/json', headers = {}) => ({
  ...rawPost(path, bytes.toString('base64'), contentType, headers),
  isBase64Encoded: true,
});

/** A sales body of one valid record, as text, with a fresh frame number. */
const salesText = (overrides: Record<string, unknown> = {}) =>
  JSON.stringify([salesRegistrationInput({ FrameNum: uniqueFrame(), ...overrides })]);

/** A case body as JSON text, with a fresh frame number. */
const caseText = (overrides: Record<string, unknown> = {}) =>
  JSON.stringify(caseInput({ frameNo: uniqueFrame(), ...overrides }));

/** A case as form text (the factory's fields, booleans as `on`), with raw `name=value` pairs appended. */
const caseForm = (overrides: Record<string, unknown> = {}, ...extra: string[]) => {
  const fields = Object.entries(caseInput({ frameNo: uniqueFrame(), ...overrides }))
    .filter(([, value]) => value !== undefined)
    .map(([name, value]): [string, string] => [name, value === true ? 'on' : String(value)]);
  return [new URLSearchParams(fields).toString(), ...extra].join('&');
};

const expectAccepted = async (response: APIGatewayProxyResult, count = 1) => {
  expect({ status: response.statusCode, body: response.body }).toEqual({
    status: 200,
    body: expect.any(String),
  });
  expectNoStackTrace(response);
  expect(await queued()).toHaveLength(count);
};

describe('__proto__ and constructor keys: 400 naming the key, prototypes untouched', () => {
  it.each(['__proto__', 'constructor', 'prototype'])(
    'sales: %s in a record or nested anywhere',
    async (key) => {
      const inRecord = `[{"${key}": {"polluted": true}, ${salesText().slice(2)}`;
      const nested = salesText({ Model: { a: [{ b: 1 }] } }).replace('"b":1', `"${key}":1`);
      for (const body of [inRecord, nested]) {
        expectSalesRefusal(
          await sales(jsonPost(SALES, body)),
          400,
          `body contains the forbidden key "${key}"`,
        );
      }
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      expect(await queued()).toEqual([]);
    },
  );

  it.each(['__proto__', 'constructor', 'prototype'])('case: %s in JSON and as a form field', async (key) => {
    const json = `{"${key}": {"polluted": true}, ${caseText().slice(1)}`;
    expectCaseRefusal(await cases(jsonPost(CASE, json)), 400, `body contains the forbidden key "${key}"`);
    const form = caseForm({}, `${key}[polluted]=1`, `${key}=1`);
    expectCaseRefusal(
      await cases(rawPost(CASE, form, FORM)),
      400,
      `body contains the forbidden key "${key}"`,
    );
    // Escaped in JSON or percent-encoded in a form, it is the same key.
    const escaped = `{"\\u005f_proto__": 1, ${caseText().slice(1)}`;
    expectCaseRefusal(
      await cases(jsonPost(CASE, escaped)),
      400,
      'body contains the forbidden key "__proto__"',
    );
    const encoded = caseForm({}, '%5F%5Fproto%5F%5F=1');
    expectCaseRefusal(
      await cases(rawPost(CASE, encoded, FORM)),
      400,
      'body contains the forbidden key "__proto__"',
    );
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(await queued()).toEqual([]);
  });
});

describe('deep nesting: 400 before any recursive code meets it', () => {
  it('sales: 100,000 levels of arrays, and objects 33 levels deep', async () => {
    const arrays = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    expectSalesRefusal(await sales(jsonPost(SALES, arrays)), 400, 'body is nested deeper than 32 levels');
    const deep = `[${'{"a":'.repeat(32)}1${'}'.repeat(32)}]`;
    expectSalesRefusal(await sales(jsonPost(SALES, deep)), 400, 'body is nested deeper than 32 levels');
    expect(await queued()).toEqual([]);
  });

  it('sales: 32 levels are parsed and judged by the rules', async () => {
    const model = JSON.parse(`${'['.repeat(30)}${']'.repeat(30)}`);
    expectSalesRefusal(
      await sales(jsonPost(SALES, salesText({ Model: model }))),
      400,
      '[0].Model must be a string',
    );
    expect(await queued()).toEqual([]);
  });

  it('case: 10,000 levels of objects in an unknown field', async () => {
    const body = `{"extra": ${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}, ${caseText().slice(1)}`;
    expectCaseRefusal(await cases(jsonPost(CASE, body)), 400, 'body is nested deeper than 32 levels');
    expect(await queued()).toEqual([]);
  });
});

describe('huge strings and arrays', () => {
  it('sales: a 900 KB name is refused by its rule, a 2 MiB body by its size', async () => {
    expectSalesRefusal(
      await sales(jsonPost(SALES, salesText({ Name: 'n'.repeat(900_000) }))),
      400,
      '[0].Name must be at most 255 characters',
    );
    expectSalesRefusal(
      await sales(jsonPost(SALES, salesText({ Name: 'n'.repeat(2 * 1024 * 1024) }))),
      413,
      'body must be at most 1 MiB',
    );
    expect(await queued()).toEqual([]);
  });

  it('sales: 501 records, and 500,000 array items; 500 bad records give a capped list of problems', async () => {
    const many = Array.from({ length: 501 }, () => salesRegistrationInput({ FrameNum: uniqueFrame() }));
    expectSalesRefusal(
      await sales(jsonPost(SALES, many)),
      400,
      'body must hold at most 500 sales registration records',
    );
    const itemsEvent = jsonPost(SALES, `[${Array(500_000).fill('1').join(',')}]`);
    const items = await sales(itemsEvent);
    // The count alone decides, before any item is validated (its speed is the bench's to measure, not a test's:
    // a timed bound here failed on a busy machine).
    expectSalesRefusal(items, 400, 'body must hold at most 500 sales registration records');
    const fiveHundred = await sales(jsonPost(SALES, `[${Array(500).fill('1').join(',')}]`));
    const { message } = JSON.parse(fiveHundred.body);
    expect(message).toMatch(/^\[0\] must be an object; .*; and 450 more problem\(s\)$/);
    expect(message.length).toBeLessThan(2_000);
    expect(await queued()).toEqual([]);
  });

  it('sales: a 100 KB unknown property name is echoed cut short', async () => {
    const name = `U${'k'.repeat(100_000)}`;
    const response = await sales(jsonPost(SALES, salesText({ [name]: 'x' })));
    expectSalesRefusal(response, 400, `[0].U${'k'.repeat(63)}… is not a known field`);
    expect(response.body.length).toBeLessThan(200);
    expect(await queued()).toEqual([]);
  });

  it('case: a 60 KB first name, a 70 KB comment, a 10,000-item array', async () => {
    expectCaseRefusal(
      await cases(jsonPost(CASE, caseText({ firstName: 'f'.repeat(60_000) }))),
      400,
      'firstName must be at most 40 characters',
    );
    expectCaseRefusal(
      await cases(jsonPost(CASE, caseText({ comments: 'c'.repeat(70 * 1024) }))),
      413,
      'body must be at most 64 KiB',
    );
    expectCaseRefusal(
      await cases(jsonPost(CASE, caseText({ firstName: Array(10_000).fill('f') }))),
      400,
      'firstName must be a single value',
    );
    expectCaseRefusal(
      await cases(jsonPost(CASE, Array(10_000).fill(caseInput()))),
      413,
      'body must be at most 64 KiB',
    );
    expectCaseRefusal(await cases(jsonPost(CASE, [caseInput()])), 400, 'body must be a single case object');
    expect(await queued()).toEqual([]);
  });
});

describe('invalid UTF-8: 400 "body is not valid UTF-8"', () => {
  const invalid = [
    ['a byte that is never UTF-8', Buffer.from([0xff])],
    ['a truncated sequence', Buffer.from([0xc3])],
    ['an overlong encoding', Buffer.from([0xc0, 0xaf])],
    ['an encoded surrogate', Buffer.from([0xed, 0xa0, 0x80])],
  ] as const;

  it.each(invalid)('sales: a base64 body with %s', async (_label, bad) => {
    const [head, tail] = salesText({ Name: 'MARK' }).split('MARK');
    const body = Buffer.concat([Buffer.from(head), bad, Buffer.from(tail)]);
    expectSalesRefusal(await sales(base64Post(SALES, body)), 400, 'body is not valid UTF-8');
    expect(await queued()).toEqual([]);
  });

  it.each(invalid)('case: a base64 JSON or form body with %s', async (_label, bad) => {
    const [head, tail] = caseText({ firstName: 'MARK' }).split('MARK');
    const json = Buffer.concat([Buffer.from(head), bad, Buffer.from(tail)]);
    expectCaseRefusal(await cases(base64Post(CASE, json)), 400, 'body is not valid UTF-8');
    const form = Buffer.concat([Buffer.from(`${caseForm()}&comments=`), bad]);
    expectCaseRefusal(await cases(base64Post(CASE, form, FORM)), 400, 'body is not valid UTF-8');
    expect(await queued()).toEqual([]);
  });

  it('lone surrogates, as characters or as JSON escapes, and percent-escapes that are not UTF-8', async () => {
    expectSalesRefusal(
      await sales(jsonPost(SALES, salesText({ Name: '\ud800' }))),
      400,
      'body is not valid UTF-8',
    );
    const escaped = salesText({ Name: 'MARK' }).replace('MARK', '\\udc00x');
    expectSalesRefusal(await sales(jsonPost(SALES, escaped)), 400, 'body is not valid UTF-8');
    const unpaired = salesText({ Name: 'MARK' }).replace('MARK', '\\ud83d\\u0041');
    expectSalesRefusal(await sales(jsonPost(SALES, unpaired)), 400, 'body is not valid UTF-8');
    expectCaseRefusal(
      await cases(jsonPost(CASE, caseText({ surname: 'x\udfff' }))),
      400,
      'body is not valid UTF-8',
    );
    for (const sequence of ['%FF', '%C3', '%C3%28', '%ED%A0%80', '%C0%AF']) {
      const form = caseForm({}, `comments=x${sequence}y`);
      expectCaseRefusal(await cases(rawPost(CASE, form, FORM)), 400, 'body is not valid UTF-8');
    }
    expect(await queued()).toEqual([]);
  });

  it('valid UTF-8 passes: base64 bodies, surrogate pairs, percent-encoded and raw non-ASCII', async () => {
    const name = 'Zoë Ñandú 中文';
    await expectAccepted(await sales(base64Post(SALES, Buffer.from(salesText({ Name: name })))));
    const escapes = salesText({ Name: 'MARK' }).replace('MARK', 'Zo\\u00eb \\u4e2d');
    await expectAccepted(await sales(jsonPost(SALES, escapes)));
    const form = caseForm(
      { comments: undefined, title: undefined },
      `comments=${encodeURIComponent(name)}`,
      `title=Dr ${name}`,
    );
    await expectAccepted(await cases(rawPost(CASE, form, FORM)));
    // Characters beyond the BMP (surrogate pairs) pass the UTF-8 check: these answers name only the e-mail.
    // (Accepting them is for the queue to carry: fauxqs refuses them where SQS accepts them, see the report.)
    const astral = salesText({ Name: 'MARK', email: 'bad' }).replace('MARK', '\\ud83d\\ude00 😀');
    expectSalesRefusal(await sales(jsonPost(SALES, astral)), 400, '[0].email is not a valid email address');
    const astralBase64 = Buffer.from(caseText({ firstName: '😀', email: 'bad' }));
    expectCaseRefusal(await cases(base64Post(CASE, astralBase64)), 400, 'email is not valid');
    const astralForm = caseForm({ title: undefined, email: 'bad' }, `title=${encodeURIComponent('😀')}`);
    expectCaseRefusal(await cases(rawPost(CASE, astralForm, FORM)), 400, 'email is not valid');
    expect(await queued()).toEqual([]);
  });
});

describe('control characters: 400 naming the field', () => {
  it.each(['\u0000', '\u0007', '\u001b', '\u007f', '\u000b'])(
    'sales and case: %j in a field',
    async (control) => {
      expectSalesRefusal(
        await sales(jsonPost(SALES, salesText({ Name: `Ab${control}cd`, Street: `${control}1 Street` }))),
        400,
        '[0].Name must not contain control characters; [0].Street must not contain control characters',
      );
      expectCaseRefusal(
        await cases(jsonPost(CASE, caseText({ firstName: `Ab${control}cd` }))),
        400,
        'firstName must not contain control characters',
      );
      const form = caseForm({}, `homePhone=${encodeURIComponent(`0${control}1`)}`);
      expectCaseRefusal(
        await cases(rawPost(CASE, form, FORM)),
        400,
        'homePhone must not contain control characters',
      );
      expect(await queued()).toEqual([]);
    },
  );

  it('U+FFFE and U+FFFF, which no queue message may carry', async () => {
    expectSalesRefusal(
      await sales(jsonPost(SALES, salesText({ Town: 'a\uffffb' }))),
      400,
      '[0].Town must not contain the noncharacters U+FFFE or U+FFFF',
    );
    expectCaseRefusal(
      await cases(jsonPost(CASE, caseText({ comments: 'a\ufffeb' }))),
      400,
      'comments must not contain the noncharacters U+FFFE or U+FFFF',
    );
    expect(await queued()).toEqual([]);
  });

  it('tab, line feed and carriage return are text, not control characters', async () => {
    await expectAccepted(await cases(jsonPost(CASE, caseText({ comments: 'Line 1\r\n\tLine 2' }))));
    await expectAccepted(await sales(jsonPost(SALES, salesText({ Model: 'CBR\t650R' }))));
  });
});

describe('duplicate keys: 400 naming the key', () => {
  it('sales: a field given twice in a record, also when escaped differently', async () => {
    const twice = salesText().replace('"email":', '"email":"first@example.com","email":');
    expectSalesRefusal(await sales(jsonPost(SALES, twice)), 400, '[0].email is given more than once');
    const [first, other] = [0, 1].map(() =>
      JSON.stringify(salesRegistrationInput({ FrameNum: uniqueFrame() })),
    );
    const second = `[${first},${other.replace('"Phone":', '"Ph\\u006fne":"1","Phone":')}]`;
    expectSalesRefusal(await sales(jsonPost(SALES, second)), 400, '[1].Phone is given more than once');
    expect(await queued()).toEqual([]);
  });

  it('case: a field given twice, at the top or inside an ignored field', async () => {
    const twice = caseText().replace('"email":', '"email":"first@example.com","email":');
    expectCaseRefusal(await cases(jsonPost(CASE, twice)), 400, 'email is given more than once');
    const nested = `{"extra":{"a":[{"b":1,"b":2}]}, ${caseText().slice(1)}`;
    expectCaseRefusal(await cases(jsonPost(CASE, nested)), 400, 'extra.a[0].b is given more than once');
    expect(await queued()).toEqual([]);
  });

  it('a 1 MiB body of 60,000 distinct keys is answered in bounded time', async () => {
    const keys = Array.from({ length: 60_000 }, (_, i) => `"k${i}":1`).join(',');
    const event = jsonPost(SALES, `[{${keys}}]`.padEnd(1024 * 1024 - 10, ' '));
    const started = Date.now();
    const response = await sales(event);
    // About 0.3 s alone, most of it listing 60,000 unknown properties; generous for a loaded machine.
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(response.statusCode).toBe(400);
    expect(JSON.parse(response.body).message).toContain('[0].DealerId is required');
    expect(await queued()).toEqual([]);
  });
});

describe('numbers beyond safe integers and non-integers', () => {
  const postcodeRule = 'must be a string or a whole number from 0 to 9007199254740991';

  it.each(['12345678901234567890', '9007199254740992', '2000.5', '-2000', '1e21', '1e400'])(
    'sales: Postcode %s',
    async (number) => {
      const body = salesText({ Postcode: 'MARK' }).replace('"MARK"', number);
      expectSalesRefusal(await sales(jsonPost(SALES, body)), 400, `[0].Postcode ${postcodeRule}`);
      expect(await queued()).toEqual([]);
    },
  );

  it('sales: DealerId beyond safe integers', async () => {
    const body = salesText({ DealerId: 'MARK' }).replace('"MARK"', '9007199254741234');
    expectSalesRefusal(
      await sales(jsonPost(SALES, body)),
      400,
      '[0].DealerId must be a 4-digit dealer number (1000-9999) or a 6-digit business-partner number (100000-999999)',
    );
    expect(await queued()).toEqual([]);
  });

  it('case: addressPostcode 1e21 and 2000.5', async () => {
    for (const number of ['1e21', '2000.5']) {
      const body = caseText({ addressPostcode: 'MARK' }).replace('"MARK"', number);
      expectCaseRefusal(await cases(jsonPost(CASE, body)), 400, `addressPostcode ${postcodeRule}`);
    }
    expect(await queued()).toEqual([]);
  });

  it('a safe whole number is still a postcode', async () => {
    await expectAccepted(await sales(jsonPost(SALES, salesText({ Postcode: 2000 }))));
  });
});

describe('repeated form fields', () => {
  it('case: a known field twice is 400 "must be a single value"', async () => {
    const form = caseForm({}, 'email=second%40example.com');
    expectCaseRefusal(await cases(rawPost(CASE, form, FORM)), 400, 'email must be a single value');
    const flags = caseForm({}, 'privacyConsent=off');
    expectCaseRefusal(await cases(rawPost(CASE, flags, FORM)), 400, 'privacyConsent must be a single value');
    expect(await queued()).toEqual([]);
  });

  it('case: an unknown field twice (a checkbox group, two submit buttons) is ignored as before', async () => {
    await expectAccepted(await cases(rawPost(CASE, caseForm({}, 'interest=a', 'interest=b'), FORM)));
  });
});

describe('JSON declaring a charset other than UTF-8: 415', () => {
  it.each(['latin1', 'ISO-8859-1', '"windows-1252"', 'utf-16'])('charset=%s', async (charset) => {
    expectSalesRefusal(
      await sales(jsonPost(SALES, salesText(), { 'Content-Type': `application/json; charset=${charset}` })),
      415,
      'Content-Type charset must be utf-8',
    );
    expectCaseRefusal(
      await cases(jsonPost(CASE, caseText(), { 'Content-Type': `application/json;charset=${charset}` })),
      415,
      'Content-Type charset must be utf-8',
    );
    expect(await queued()).toEqual([]);
  });

  it('forms: the legacy charsets of web pages are read (lib/forms/formCharset.ts), any other is 415', async () => {
    const response = await cases(rawPost(CASE, caseForm(), `${FORM}; charset=utf-16`));
    expect(response.statusCode).toBe(415);
    expect(JSON.parse(response.body)).toMatch(/^Create Case failed: .*charset/);
    expectNoStackTrace(response);
    expect(await queued()).toEqual([]);
  });

  it('UTF-8 in any spelling is fine', async () => {
    await expectAccepted(
      await sales(jsonPost(SALES, salesText(), { 'Content-Type': 'application/json; charset="UTF-8"' })),
    );
    await expectAccepted(await cases(rawPost(CASE, caseForm(), `${FORM}; charset=utf8`)));
  });
});

describe('compressed bodies: 415', () => {
  const encodingReason = 'Content-Encoding must be identity: compressed bodies are not accepted';

  it.each(['gzip', 'br', 'deflate', 'gzip, identity'])('Content-Encoding: %s', async (encoding) => {
    const headers = { 'Content-Encoding': encoding };
    const gz = (text: string) => gzipSync(Buffer.from(text));
    expectSalesRefusal(
      await sales(base64Post(SALES, gz(salesText()), 'application/json', headers)),
      415,
      encodingReason,
    );
    expectCaseRefusal(
      await cases(base64Post(CASE, gz(caseText()), 'application/json', headers)),
      415,
      encodingReason,
    );
    expectCaseRefusal(await cases(base64Post(CASE, gz(caseForm()), FORM, headers)), 415, encodingReason);
    expect(await queued()).toEqual([]);
  });

  it('identity is no compression', async () => {
    await expectAccepted(await sales(jsonPost(SALES, salesText(), { 'Content-Encoding': 'identity' })));
  });
});
