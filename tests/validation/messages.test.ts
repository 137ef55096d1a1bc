import type { ErrorObject } from 'ajv';
import { describe, expect, it } from 'vitest';
import { describeErrors } from '../../lib/validation/messages.ts';

/** An ajv error as the generated validators report it. */
const error = (
  keyword: string,
  instancePath: string,
  schemaPath: string,
  params: Record<string, unknown> = {},
): ErrorObject => ({ keyword, instancePath, schemaPath, params });

/** A schema with no x-messages anywhere: every rule is the plain default. */
const plain = { type: 'object', properties: { field: { type: 'string' } } };

describe('describeErrors: plain rules for every keyword', () => {
  it.each([
    ['type', { type: 'string' }, 'must be a string'],
    ['type', { type: 'integer' }, 'must be a whole number'],
    ['type', { type: 'number' }, 'must be a number'],
    ['type', { type: 'boolean' }, 'must be true or false'],
    ['type', { type: 'object' }, 'must be an object'],
    ['type', { type: 'array' }, 'must be an array'],
    ['type', { type: 'string,number' }, 'must be a string or a number'],
    ['type', { type: 'string,null' }, 'must be a string or null'],
    ['maxLength', { limit: 40 }, 'must be at most 40 characters'],
    ['minLength', { limit: 1 }, 'must not be blank'],
    ['enum', { allowedValues: ['C', 'P', 'X'] }, 'must be one of C, P, X'],
    ['format', { format: 'email' }, 'is not a valid email'],
    ['pattern', { pattern: '^x$' }, 'is not in the expected form'],
    ['minimum', { comparison: '>=', limit: 1000 }, 'must be >= 1000'],
    ['maximum', { comparison: '<=', limit: 9999 }, 'must be <= 9999'],
    ['maxItems', { limit: 500 }, 'must hold at most 500 items'],
    ['minItems', { limit: 1 }, 'must hold at least 1 items'],
    ['const', { allowedValue: 'C' }, 'is not valid'],
    ['uniqueItems', { i: 0, j: 1 }, 'is not valid'],
  ])('%s %j: "%s"', (keyword, params, rule) => {
    // Act
    const problems = describeErrors(
      [error(keyword, '/field', `#/properties/field/${keyword}`, params)],
      plain,
    );

    // Assess
    expect(problems).toEqual([{ field: 'field', rule }]);
  });
});

describe('describeErrors: where the problem is', () => {
  it('reads the record index and the field from the instance path', () => {
    // Act
    const problems = describeErrors(
      [
        error('type', '', '#/type', { type: 'array' }),
        error('type', '/3', '#/items/type', { type: 'object' }),
        error('type', '/12/email', '#/items/properties/email/type', { type: 'string' }),
        error('type', '/0/address/street', '#/items/properties/address/type', { type: 'string' }),
      ],
      plain,
    );

    // Assess
    expect(problems).toEqual([
      { rule: 'must be an array' },
      { index: 3, rule: 'must be an object' },
      { index: 12, field: 'email', rule: 'must be a string' },
      { index: 0, field: 'address.street', rule: 'must be a string' },
    ]);
  });

  it('takes only a whole number as a record index, not a field name with digits', () => {
    // Act
    const problems = describeErrors(
      [
        error('type', '/Name2', '#/properties/Name2/type', { type: 'string' }),
        error('type', '/2fa', '#/properties/2fa/type', { type: 'string' }),
        error('type', '/7/Name2', '#/items/properties/Name2/type', { type: 'string' }),
      ],
      plain,
    );

    // Assess
    expect(problems).toEqual([
      { field: 'Name2', rule: 'must be a string' },
      { field: '2fa', rule: 'must be a string' },
      { index: 7, field: 'Name2', rule: 'must be a string' },
    ]);
  });

  it('decodes ~1 and ~0 in field names (JSON Pointer) and finds their messages in the schema', () => {
    // Prepare
    const schema = {
      properties: {
        'a/b': { 'x-messages': { type: 'slash rule' } },
        'c~d': { 'x-messages': { type: 'tilde rule' } },
        'e~1f': { 'x-messages': { type: 'literal rule' } },
      },
    };

    // Act
    const problems = describeErrors(
      [
        error('type', '/a~1b', '#/properties/a~1b/type', { type: 'string' }),
        error('type', '/c~0d', '#/properties/c~0d/type', { type: 'string' }),
        error('type', '/e~01f', '#/properties/e~01f/type', { type: 'string' }),
      ],
      schema,
    );

    // Assess
    expect(problems).toEqual([
      { field: 'a/b', rule: 'slash rule' },
      { field: 'c~d', rule: 'tilde rule' },
      { field: 'e~1f', rule: 'literal rule' },
    ]);
  });
});

describe('describeErrors: messages from the schema', () => {
  const schema = {
    'x-messages': { type: 'body rule' },
    properties: {
      code: { 'x-messages': { pattern: 'code pattern rule' } },
      dealer: {
        anyOf: [{ minimum: 1 }, { minimum: 10 }],
        'x-messages': { '*': 'dealer rule' },
      },
      loose: { anyOf: [{ type: 'string' }, { type: 'number' }] },
    },
    // Where a `then` would be; named otherwise, as a thenable object is a trap for await.
    allOf: [{ required: ['company'], 'x-when': 'when kind is C' }],
  };

  it('uses x-messages by keyword, at the root and on a property, else the default', () => {
    // Act
    const problems = describeErrors(
      [
        error('type', '', '#/type', { type: 'object' }),
        error('pattern', '/code', '#/properties/code/pattern', { pattern: '^x$' }),
        error('maxLength', '/code', '#/properties/code/maxLength', { limit: 3 }),
      ],
      schema,
    );

    // Assess
    expect(problems).toEqual([
      { rule: 'body rule' },
      { field: 'code', rule: 'code pattern rule' },
      { field: 'code', rule: 'must be at most 3 characters' },
    ]);
  });

  it('uses the * message for any keyword below the property, and merges the repeats', () => {
    // Act
    const problems = describeErrors(
      [
        error('minimum', '/dealer', '#/properties/dealer/anyOf/0/minimum', { comparison: '>=', limit: 1 }),
        error('minimum', '/dealer', '#/properties/dealer/anyOf/1/minimum', { comparison: '>=', limit: 10 }),
        error('anyOf', '/dealer', '#/properties/dealer/anyOf', {}),
      ],
      schema,
    );

    // Assess
    expect(problems).toEqual([{ field: 'dealer', rule: 'dealer rule' }]);
  });

  it('drops an anyOf without a message of its own: it only summarises the errors before it', () => {
    // Act
    const problems = describeErrors(
      [
        error('type', '/loose', '#/properties/loose/anyOf/0/type', { type: 'string' }),
        error('type', '/loose', '#/properties/loose/anyOf/1/type', { type: 'number' }),
        error('anyOf', '/loose', '#/properties/loose/anyOf', {}),
      ],
      schema,
    );

    // Assess
    expect(problems).toEqual([
      { field: 'loose', rule: 'must be a string' },
      { field: 'loose', rule: 'must be a number' },
    ]);
  });

  it('drops if errors, and words required with x-when where the schema gives one', () => {
    // Act
    const problems = describeErrors(
      [
        error('required', '', '#/required', { missingProperty: 'name' }),
        error('required', '/4', '#/allOf/0/required', { missingProperty: 'company' }),
        error('if', '/4', '#/if', { failingKeyword: 'then' }),
      ],
      schema,
    );

    // Assess
    expect(problems).toEqual([
      { field: 'name', rule: 'is required' },
      { index: 4, field: 'company', rule: 'is required when kind is C' },
    ]);
  });

  it('names an unknown field, cut short and with controls shown as ?', () => {
    // Act
    const problems = describeErrors(
      [
        error('additionalProperties', '/0', '#/items/additionalProperties', { additionalProperty: 'Colour' }),
        error('additionalProperties', '', '#/additionalProperties', {
          additionalProperty: `a\u0000${'k'.repeat(100)}`,
        }),
      ],
      schema,
    );

    // Assess
    expect(problems).toEqual([
      { index: 0, field: 'Colour', rule: 'is not a known field' },
      { field: `a?${'k'.repeat(62)}…`, rule: 'is not a known field' },
    ]);
  });

  it('merges problems only when index, field and rule are all the same', () => {
    // Act
    const problems = describeErrors(
      [
        error('type', '/0/a', '#/properties/a/type', { type: 'string' }),
        error('type', '/0/a', '#/properties/a/type', { type: 'string' }),
        error('type', '/1/a', '#/properties/a/type', { type: 'string' }),
        error('type', '/0/b', '#/properties/b/type', { type: 'string' }),
        error('type', '/0/a', '#/properties/a/type', { type: 'number' }),
      ],
      plain,
    );

    // Assess
    expect(problems).toEqual([
      { index: 0, field: 'a', rule: 'must be a string' },
      { index: 1, field: 'a', rule: 'must be a string' },
      { index: 0, field: 'b', rule: 'must be a string' },
      { index: 0, field: 'a', rule: 'must be a number' },
    ]);
  });
});

describe('describeErrors: schema paths that lead nowhere', () => {
  // The generated validators and the schema files could drift apart (a schema edited, the validators not
  // rebuilt): a path into nothing, into null or through a string still gives the plain rule, never a crash.
  const schema = {
    definitions: { gone: null, text: 'a string, not a schema' },
    properties: { field: { description: 'no messages here' } },
  };

  it.each([
    ['a missing branch', '#/missing/deeper/still/type'],
    ['null on the way', '#/definitions/gone/deeper/type'],
    ['a string on the way', '#/definitions/text/deeper/still/type'],
    ['a property that is not in the schema', '#/properties/other/type'],
    ['a keyword below a property with no messages', '#/properties/field/type'],
  ])('%s', (_label, schemaPath) => {
    // Act
    const problems = describeErrors([error('type', '/field', schemaPath, { type: 'string' })], schema);

    // Assess
    expect(problems).toEqual([{ field: 'field', rule: 'must be a string' }]);
  });

  it('a required error whose schema node is missing is plainly required', () => {
    // Act
    const problems = describeErrors(
      [error('required', '', '#/missing/deeper/required', { missingProperty: 'name' })],
      schema,
    );

    // Assess
    expect(problems).toEqual([{ field: 'name', rule: 'is required' }]);
  });
});
