import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  classifyErpAnswer,
  documentNumber,
  isCsrfRequired,
  isOwnRepeat,
  odataErrorMessage,
  repeatedDocumentNumber,
} from '../../lib/downstream/erp/response.ts';

/** An OData v2 error body with `message` as given. */
const odataError = (message: unknown): string => JSON.stringify({ error: { code: 'ZSD/001', message } });

describe('odataErrorMessage: the text of an OData v2 error body', () => {
  it('reads message.value, and a plain string message of older gateways', () => {
    // Act
    const texts = [
      odataError({ lang: 'en', value: 'Frame unknown' }),
      odataError('Dealer blocked'),
      odataError({ lang: 'en', value: '  padded  ' }),
    ].map(odataErrorMessage);

    // Assess
    expect(texts).toEqual(['Frame unknown', 'Dealer blocked', '  padded  ']);
  });

  it.each([
    ['a blank value', odataError({ lang: 'en', value: ' \t ' })],
    ['an empty string message', odataError('')],
    ['a value that is a number', odataError({ value: 42 })],
    ['a message that is a number', odataError(42)],
    ['a message that is null', odataError(null)],
    ['a message object without value', odataError({ lang: 'en' })],
    ['an error without message', JSON.stringify({ error: { code: 'X' } })],
    ['error as a string', JSON.stringify({ error: 'Frame unknown' })],
    ['error null', JSON.stringify({ error: null })],
    ['a JSON body without error', JSON.stringify({ d: {} })],
    ['JSON null', 'null'],
    ['a JSON array', '[{"error":{"message":"x"}}]'],
    ['a JSON string', '"Frame unknown"'],
    ['an HTML page', '<html><body>Service Unavailable</body></html>'],
    ['nothing', ''],
  ])('none in %s', (_label, text) => {
    expect(odataErrorMessage(text)).toBeUndefined();
  });
});

describe('documentNumber: d.DocumentNumber of an OData v2 entity', () => {
  it('reads a string, and a number as its digits', () => {
    expect(
      [
        JSON.stringify({ d: { DocumentNumber: '49000001' } }),
        JSON.stringify({ d: { DocumentNumber: 49000002 } }),
      ].map(documentNumber),
    ).toEqual(['49000001', '49000002']);
  });

  it.each([
    ['a boolean', JSON.stringify({ d: { DocumentNumber: true } })],
    ['null', JSON.stringify({ d: { DocumentNumber: null } })],
    ['an object', JSON.stringify({ d: { DocumentNumber: { value: '49000001' } } })],
    ['no DocumentNumber', JSON.stringify({ d: { RegistrationId: 'r' } })],
    ['d as a string', JSON.stringify({ d: '49000001' })],
    ['d null', JSON.stringify({ d: null })],
    ['d as an array', JSON.stringify({ d: [{ DocumentNumber: '49000001' }] })],
    ['no d', JSON.stringify({ DocumentNumber: '49000001' })],
    ['JSON null', 'null'],
    ['a JSON number', '49000001'],
    ['not JSON', 'Created'],
  ])('none in %s', (_label, text) => {
    expect(documentNumber(text)).toBeUndefined();
  });
});

describe('classifyErpAnswer: every status class', () => {
  const created = JSON.stringify({ d: { DocumentNumber: '49000007' } });

  it.each([200, 201, 202, 204, 299])(
    '%i is delivered, with the document number when there is one',
    (status) => {
      // Act
      const withNumber = classifyErpAnswer(status, created, []);
      const withoutNumber = classifyErpAnswer(status, '', []);

      // Assess
      expect(withNumber).toStrictEqual({
        kind: 'delivered',
        status,
        reachedDownstream: true,
        downstreamId: '49000007',
      });
      expect(withoutNumber).toStrictEqual({ kind: 'delivered', status, reachedDownstream: true });
    },
  );

  it('a 2xx with a body that is not JSON is delivered: the ERP has the record', () => {
    expect(classifyErpAnswer(201, '<html>ok</html>', [])).toStrictEqual({
      kind: 'delivered',
      status: 201,
      reachedDownstream: true,
    });
  });

  it.each([401, 403, 408, 429, 500, 503, 599, 300, 301, 302, 304, 307, 399, 199, 100])(
    '%i is transient, with the ERP message when there is one',
    (status) => {
      // Act
      const withMessage = classifyErpAnswer(status, odataError({ value: 'Try later' }), []);
      const withoutMessage = classifyErpAnswer(status, '<html>', []);

      // Assess
      expect(withMessage).toStrictEqual({
        kind: 'transient',
        error: `HTTP ${status}: Try later`,
        reachedDownstream: true,
      });
      expect(withoutMessage).toStrictEqual({
        kind: 'transient',
        error: `HTTP ${status}`,
        reachedDownstream: true,
      });
    },
  );

  it.each([400, 402, 404, 405, 407, 409, 410, 413, 415, 422, 428, 430, 451, 499])(
    '%i is permanent, with the ERP message, else the status',
    (status) => {
      // Act
      const withMessage = classifyErpAnswer(status, odataError({ value: 'Frame unknown' }), []);
      const withoutMessage = classifyErpAnswer(status, '', []);

      // Assess
      expect(withMessage).toStrictEqual({
        kind: 'permanent',
        error: 'Frame unknown',
        reachedDownstream: true,
      });
      expect(withoutMessage).toStrictEqual({
        kind: 'permanent',
        error: `HTTP ${status}`,
        reachedDownstream: true,
      });
    },
  );

  it('blanks the personal values out of transient and permanent texts', () => {
    // Prepare
    const text = odataError({ value: 'Customer Giulietta Marchetti is blocked' });
    const personal = ['Giulietta', 'Marchetti'];

    // Act
    const outcomes = [classifyErpAnswer(503, text, personal), classifyErpAnswer(422, text, personal)];

    // Assess
    expect(outcomes).toStrictEqual([
      {
        kind: 'transient',
        error: 'HTTP 503: Customer [redacted] [redacted] is blocked',
        reachedDownstream: true,
      },
      { kind: 'permanent', error: 'Customer [redacted] [redacted] is blocked', reachedDownstream: true },
    ]);
  });
});

describe('isOwnRepeat: a 409 naming our own RegistrationId', () => {
  const id = '9b1f0c2d3e4f5a6b7c8d9e0f1a2b3c4d';

  it('is true for a 409 whose message names the id, in either message form', () => {
    expect([
      isOwnRepeat(409, odataError({ value: `RegistrationId ${id} already registered` }), id),
      isOwnRepeat(409, odataError(`RegistrationId ${id} already registered`), id),
    ]).toEqual([true, true]);
  });

  it.each([
    ['a 409 naming another id', 409, odataError({ value: 'RegistrationId 0000 already registered' }), id],
    ['a 409 for the frame number', 409, odataError({ value: 'Frame number F1 is already registered' }), id],
    ['another status naming the id', 400, odataError({ value: `RegistrationId ${id} is invalid` }), id],
    ['a 200 naming the id', 200, odataError({ value: id }), id],
    ['an empty id (found in any text)', 409, odataError({ value: 'already registered' }), ''],
  ])('is false for %s', (_label, status, text, registrationId) => {
    expect(isOwnRepeat(status, text, registrationId)).toBe(false);
  });

  it('is false for a 409 without an OData message, whatever the id', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1, maxLength: 40 }),
        fc.constantFrom('', '<html>', '{}'),
        (anyId, text) => {
          expect(isOwnRepeat(409, text, anyId)).toBe(false);
        },
      ),
      {
        examples: [
          ['a', ''],
          ['here', '<html>'],
          ['!', '{}'],
          [id, ''],
        ],
      },
    );
  });
});

describe('isCsrfRequired: the 403 that asks for a new CSRF token', () => {
  it.each(['Required', 'required', 'REQUIRED', ' Required '])(
    'is true for a 403 with X-CSRF-Token: %j',
    (value) => {
      expect(isCsrfRequired(403, new Headers({ 'x-csrf-token': value }))).toBe(true);
    },
  );

  it.each([
    ['a 403 without the header', 403, new Headers()],
    ['a 403 with a token', 403, new Headers({ 'x-csrf-token': 'abc123==' })],
    ['a 403 with an empty header', 403, new Headers({ 'x-csrf-token': '' })],
    ['a 403 saying Required and more', 403, new Headers({ 'x-csrf-token': 'Required, please' })],
    ['a 401 with Required', 401, new Headers({ 'x-csrf-token': 'Required' })],
    ['a 200 with Required', 200, new Headers({ 'x-csrf-token': 'Required' })],
  ])('is false for %s', (_label, status, headers) => {
    expect(isCsrfRequired(status, headers)).toBe(false);
  });
});

describe('repeatedDocumentNumber: the document an own-repeat 409 names', () => {
  it('reads the document number from the message, or nothing when it names none', () => {
    // Act
    const found = [
      repeatedDocumentNumber(
        odataError({ value: 'RegistrationId abc already registered as document 49000007' }),
      ),
      repeatedDocumentNumber(odataError('RegistrationId abc already registered (document number 49000008)')),
      repeatedDocumentNumber(odataError({ value: 'RegistrationId abc already registered' })),
      repeatedDocumentNumber('<html>'),
    ];
    // Assess
    expect(found).toEqual(['49000007', '49000008', undefined, undefined]);
  });
});
