import { describe, expect, it } from 'vitest';
import { classifyCrmAnswer, isInvalidSession } from '../../lib/downstream/crm/response.ts';

/** A Salesforce REST error body. */
const errorsBody = (...entries: { message?: unknown; errorCode?: unknown }[]): string =>
  JSON.stringify(entries.map((entry) => ({ ...entry, fields: [] })));

const upserted = JSON.stringify({ id: '500xx000000AbCdEAA', success: true, errors: [], created: true });

describe('classifyCrmAnswer: every status class', () => {
  it.each([200, 201, 204, 299])('%i is delivered, with the case id when there is one', (status) => {
    // Act
    const withId = classifyCrmAnswer(status, upserted, []);
    const withoutId = classifyCrmAnswer(status, '', []);

    // Assess
    expect(withId).toStrictEqual({
      kind: 'delivered',
      status,
      reachedDownstream: true,
      downstreamId: '500xx000000AbCdEAA',
    });
    expect(withoutId).toStrictEqual({ kind: 'delivered', status, reachedDownstream: true });
  });

  it.each([401, 403, 408, 429, 500, 503, 599, 301, 302, 307, 399, 199])(
    '%i is transient: status, then each errorCode and message',
    (status) => {
      // Act
      const outcome = classifyCrmAnswer(status, errorsBody({ message: 'Try later', errorCode: 'BUSY' }), []);
      const bare = classifyCrmAnswer(status, '<html>', []);

      // Assess
      expect(outcome).toStrictEqual({
        kind: 'transient',
        error: `HTTP ${status}: BUSY: Try later`,
        reachedDownstream: true,
      });
      expect(bare).toStrictEqual({ kind: 'transient', error: `HTTP ${status}`, reachedDownstream: true });
    },
  );

  it('a transient text joins the entries with "; " and leaves out a missing code or message', () => {
    // Prepare
    const text = errorsBody(
      { message: 'Service unavailable', errorCode: 'SERVER_UNAVAILABLE' },
      { message: 'only a message' },
      { errorCode: 'ONLY_A_CODE' },
      { message: '', errorCode: 'EMPTY_MESSAGE' },
    );

    // Act
    const outcome = classifyCrmAnswer(503, text, []);

    // Assess
    expect(outcome).toStrictEqual({
      kind: 'transient',
      error: 'HTTP 503: SERVER_UNAVAILABLE: Service unavailable; only a message; ONLY_A_CODE; EMPTY_MESSAGE',
      reachedDownstream: true,
    });
  });

  it.each([400, 402, 404, 405, 409, 415, 422, 499])(
    '%i is permanent: the messages, a code where there is no message, else the status',
    (status) => {
      // Act
      const outcome = classifyCrmAnswer(
        status,
        errorsBody({ message: 'Bad value', errorCode: 'INVALID_FIELD' }, { errorCode: 'NO_MESSAGE' }),
        [],
      );
      const bare = classifyCrmAnswer(status, '<html>', []);

      // Assess
      expect(outcome).toStrictEqual({
        kind: 'permanent',
        error: 'Bad value; NO_MESSAGE',
        reachedDownstream: true,
      });
      expect(bare).toStrictEqual({ kind: 'permanent', error: `HTTP ${status}`, reachedDownstream: true });
    },
  );

  it('300 is permanent: the external id matches more than one Case', () => {
    expect([
      classifyCrmAnswer(
        300,
        '["/services/data/v60.0/sobjects/Case/500A", "/services/data/v60.0/sobjects/Case/500B"]',
        [],
      ),
      classifyCrmAnswer(
        300,
        errorsBody({ message: 'More than one record found', errorCode: 'MULTIPLE' }),
        [],
      ),
    ]).toStrictEqual([
      {
        kind: 'permanent',
        error: 'HTTP 300: the external id matches more than one Case',
        reachedDownstream: true,
      },
      { kind: 'permanent', error: 'More than one record found', reachedDownstream: true },
    ]);
  });

  it('a 400 UNABLE_TO_LOCK_ROW is transient, alone or among other errors; on another status it changes nothing', () => {
    // Prepare
    const lock = {
      message: 'unable to obtain exclusive access to this record',
      errorCode: 'UNABLE_TO_LOCK_ROW',
    };
    const other = { message: 'Bad value', errorCode: 'INVALID_FIELD' };

    // Act
    const outcomes = [
      classifyCrmAnswer(400, errorsBody(lock), []),
      classifyCrmAnswer(400, errorsBody(other, lock), []),
      classifyCrmAnswer(409, errorsBody(lock), []),
      classifyCrmAnswer(400, errorsBody({ message: 'UNABLE_TO_LOCK_ROW', errorCode: 'INVALID_FIELD' }), []),
    ];

    // Assess
    expect(outcomes).toStrictEqual([
      {
        kind: 'transient',
        error: 'HTTP 400: UNABLE_TO_LOCK_ROW: unable to obtain exclusive access to this record',
        reachedDownstream: true,
      },
      {
        kind: 'transient',
        error:
          'HTTP 400: INVALID_FIELD: Bad value; UNABLE_TO_LOCK_ROW: unable to obtain exclusive access to this record',
        reachedDownstream: true,
      },
      {
        kind: 'permanent',
        error: 'unable to obtain exclusive access to this record',
        reachedDownstream: true,
      },
      { kind: 'permanent', error: 'UNABLE_TO_LOCK_ROW', reachedDownstream: true },
    ]);
  });

  it('blanks the personal values out of transient and permanent texts', () => {
    // Prepare
    const text = errorsBody({ message: 'Duplicate contact Aroha Ngata', errorCode: 'DUPLICATES_DETECTED' });

    // Act
    const outcomes = [
      classifyCrmAnswer(503, text, ['Aroha', 'Ngata']),
      classifyCrmAnswer(400, text, ['Aroha', 'Ngata']),
    ];

    // Assess
    expect(outcomes).toStrictEqual([
      {
        kind: 'transient',
        error: 'HTTP 503: DUPLICATES_DETECTED: Duplicate contact [redacted] [redacted]',
        reachedDownstream: true,
      },
      { kind: 'permanent', error: 'Duplicate contact [redacted] [redacted]', reachedDownstream: true },
    ]);
  });
});

describe('isInvalidSession: the 401 that asks for a new access token', () => {
  const expired = { message: 'Session expired or invalid', errorCode: 'INVALID_SESSION_ID' };

  it('is true for a 401 with INVALID_SESSION_ID among its errors', () => {
    expect([
      isInvalidSession(401, errorsBody(expired)),
      isInvalidSession(401, errorsBody({ message: 'other', errorCode: 'OTHER' }, expired)),
      isInvalidSession(401, JSON.stringify(expired)),
    ]).toEqual([true, true, true]);
  });

  it.each([
    [
      'a 401 with another code',
      401,
      errorsBody({ message: 'Session expired or invalid', errorCode: 'OTHER' }),
    ],
    [
      'a 401 with the code only in its message',
      401,
      errorsBody({ message: 'INVALID_SESSION_ID', errorCode: 'X' }),
    ],
    ['a 401 without a body', 401, ''],
    ['a 401 with an HTML page', 401, '<html>login</html>'],
    ['a 403 with INVALID_SESSION_ID', 403, errorsBody(expired)],
    ['a 400 with INVALID_SESSION_ID', 400, errorsBody(expired)],
  ])('is false for %s', (_label, status, text) => {
    expect(isInvalidSession(status, text)).toBe(false);
  });
});
