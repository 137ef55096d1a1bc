import { describe, expect, it } from 'vitest';
import {
  formatProblem,
  MAX_ECHOED_NAME_LENGTH,
  nameForMessage,
  sortProblems,
} from '../../lib/validation/format.ts';

describe('formatProblem', () => {
  it('names the record index, the field, or the body', () => {
    // Act
    const sentences = [
      { index: 1, field: 'email', rule: 'is not a valid email address' },
      { field: 'email', rule: 'is not valid' },
      { index: 0, rule: 'must be an object' },
      { rule: 'must be a JSON array of sales registration records' },
    ].map(formatProblem);

    // Assess
    expect(sentences).toEqual([
      '[1].email is not a valid email address',
      'email is not valid',
      '[0] must be an object',
      'body must be a JSON array of sales registration records',
    ]);
  });
});

describe('sortProblems: record by record, in the order found within a record', () => {
  it('puts body problems first, then each record in index order', () => {
    // Prepare
    const problems = [
      { index: 2, field: 'a', rule: 'r' },
      { index: 0, field: 'b', rule: 'r' },
      { rule: 'body' },
      { index: 1, field: 'c', rule: 'r' },
      { index: 10, field: 'd', rule: 'r' },
    ];

    // Act
    const sorted = sortProblems(problems);

    // Assess
    expect(sorted.map((p) => p.field ?? p.rule)).toEqual(['body', 'b', 'c', 'a', 'd']);
  });

  it('keeps a body problem first wherever it was found', () => {
    // Prepare
    const problems = [
      { rule: 'body' },
      { index: 0, field: 'a', rule: 'r' },
      { index: 1, field: 'b', rule: 'r' },
    ];

    // Act
    const sorted = sortProblems(problems);

    // Assess
    expect(sorted).toEqual(problems);
  });

  it('keeps the order in which the problems of one record were found', () => {
    // Prepare
    const problems = ['first', 'second', 'third', 'fourth'].map((field) => ({ index: 3, field, rule: 'r' }));

    // Act
    const sorted = sortProblems([{ index: 4, field: 'later', rule: 'r' }, ...problems]);

    // Assess
    expect(sorted.map((p) => p.field)).toEqual(['first', 'second', 'third', 'fourth', 'later']);
  });

  it('sorts the problems of record 0 before those of record 1, and after the body', () => {
    // Prepare
    const problems = [
      { index: 1, field: 'x', rule: 'r' },
      { index: 0, field: 'y', rule: 'r' },
      { rule: 'body' },
    ];

    // Act
    const sorted = sortProblems(problems);

    // Assess
    expect(sorted).toEqual([problems[2], problems[1], problems[0]]);
    expect(problems.map((p) => p.field ?? p.rule)).toEqual(['x', 'y', 'body']);
  });
});

describe('nameForMessage: a caller-sent name, safe to repeat', () => {
  it('repeats a name of up to 64 characters as it is', () => {
    // Prepare
    const name = 'k'.repeat(MAX_ECHOED_NAME_LENGTH);

    // Act
    const shown = nameForMessage(name);

    // Assess
    expect(MAX_ECHOED_NAME_LENGTH).toBe(64);
    expect(shown).toBe(name);
  });

  it('cuts a longer name to 64 characters and marks the cut', () => {
    expect(nameForMessage('k'.repeat(65))).toBe(`${'k'.repeat(64)}…`);
    expect(nameForMessage(`${'a'.repeat(64)}${'b'.repeat(100_000)}`)).toBe(`${'a'.repeat(64)}…`);
  });

  it('never ends a cut on half a surrogate pair', () => {
    // Prepare: the 64th character is the first half of an emoji.
    const name = `${'x'.repeat(63)}😀tail`;

    // Act
    const shown = nameForMessage(name);

    // Assess
    expect(shown).toBe(`${'x'.repeat(63)}…`);
  });

  it.each([
    ['U+10000, the first pair', '\ud800\udc00'],
    ['U+10FFFF, the last pair', '\udbff\udfff'],
  ])('drops the first half of %s at the cut', (_label, pair) => {
    expect(nameForMessage(`${'x'.repeat(63)}${pair}tail`)).toBe(`${'x'.repeat(63)}…`);
  });

  it.each([
    ['U+D7FF, just below the surrogates', '\ud7ff'],
    ['U+DC00, a second half', '\udc00'],
    ['U+E000, just above the surrogates', '\ue000'],
  ])('keeps %s at the cut', (_label, character) => {
    expect(nameForMessage(`${'x'.repeat(63)}${character}tail`)).toBe(`${'x'.repeat(63)}${character}…`);
  });

  it('keeps a whole pair that ends exactly at the cut', () => {
    expect(nameForMessage(`${'x'.repeat(62)}😀tail`)).toBe(`${'x'.repeat(62)}😀…`);
  });

  it('leaves a short name alone, even one ending in half a pair', () => {
    expect(nameForMessage('ab\ud83d')).toBe('ab\ud83d');
  });

  it('shows C0 and C1 control characters and DEL as ?', () => {
    // Act
    const shown = nameForMessage('a\u0000b\u001fc d\u007fe\u0080f\u009fg\u00a0h~i\u001bj');

    // Assess
    expect(shown).toBe('a?b?c d?e?f?g\u00a0h~i?j');
  });

  it('shows controls as ? in a cut name too', () => {
    expect(nameForMessage(`\u0000${'n'.repeat(70)}`)).toBe(`?${'n'.repeat(63)}…`);
  });
});
