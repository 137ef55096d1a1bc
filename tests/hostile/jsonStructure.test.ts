import { describe, expect, it } from 'vitest';
import { bodyTextOf, checkFormText } from '../../lib/http/bodyText.ts';
import { checkJsonStructure } from '../../lib/http/jsonStructure.ts';
import { nameForMessage } from '../../lib/validation/format.ts';

const limits = { maxDepth: 32, forbiddenKeys: new Set(['__proto__', 'constructor', 'prototype']) };
const check = (text: string) => checkJsonStructure(text, limits);

describe('checkJsonStructure', () => {
  it('passes well-formed JSON without duplicates, whatever the strings hold', () => {
    expect(check('[{"a":1,"b":"{[\\"a\\":,]}","c":[{"a":1},{"a":2}]},{"a":1}]')).toBeUndefined();
    expect(check('{"a":{"a":{"a":1}},"b":"\\ud83d\\ude00"}')).toBeUndefined();
    expect(check('"just a string"')).toBeUndefined();
  });

  it('names a duplicate key by its path, however its spelling is escaped', () => {
    expect(check('[{"a":1},{"email":"x","email":"y"}]')).toBe('[1].email is given more than once');
    expect(check('{"x":{"y":[0,{"k":1,"\\u006b":2}]}}')).toBe('x.y[1].k is given more than once');
    expect(check(`{"${'k'.repeat(100)}":1,"${'k'.repeat(100)}":2}`)).toBe(
      `${'k'.repeat(64)}… is given more than once`,
    );
  });

  it('counts depth: 32 levels pass, 33 do not', () => {
    expect(check(`${'['.repeat(32)}${']'.repeat(32)}`)).toBeUndefined();
    expect(check(`${'['.repeat(33)}${']'.repeat(33)}`)).toBe('body is nested deeper than 32 levels');
    expect(check('['.repeat(1_000_000))).toBe('body is nested deeper than 32 levels');
  });

  it('refuses forbidden keys at any depth, not as values', () => {
    expect(check('[{"a":{"__proto__":1}}]')).toBe('body contains the forbidden key "__proto__"');
    expect(check('{"\\u0063onstructor":1}')).toBe('body contains the forbidden key "constructor"');
    expect(check('{"a":"__proto__","b":["constructor"]}')).toBeUndefined();
  });

  it('refuses lone surrogate escapes, high or low', () => {
    expect(check('["\\ud800"]')).toBe('body is not valid UTF-8');
    expect(check('["\\ud800\\u0041"]')).toBe('body is not valid UTF-8');
    expect(check('["\\udc00"]')).toBe('body is not valid UTF-8');
    expect(check('{"\\ud800":1}')).toBe('body is not valid UTF-8');
  });

  it('leaves malformed JSON to JSON.parse', () => {
    for (const text of ['[{"a":1', '{"a', '{"a\\x":1}', ']]]', '{"a":1}}', ''])
      expect(check(text)).toBeUndefined();
  });

  it('scans a 1 MiB body in linear time', () => {
    const keys = `[${Array.from({ length: 20_000 }, (_, i) => `{"k${i}":"${'v'.repeat(40)}","n":${i}}`).join(',')}]`;
    const strings = `["${'x\\"'.repeat(350_000)}"]`;
    for (const text of [keys, strings]) {
      expect(text.length).toBeGreaterThan(1_000_000);
      const started = performance.now();
      expect(check(text)).toBeUndefined();
      // About 25 ms alone; a scan that is not linear would take minutes.
      expect(performance.now() - started).toBeLessThan(1_000);
    }
  });
});

describe('bodyTextOf and checkFormText', () => {
  it('reads base64 bodies only when they are UTF-8, and strings only when well formed', () => {
    expect(bodyTextOf(Buffer.from('Zoë').toString('base64'), true)).toBe('Zoë');
    expect(bodyTextOf(Buffer.from([0x5b, 0xff, 0x5d]).toString('base64'), true)).toBeUndefined();
    expect(bodyTextOf('[\ud800]', false)).toBeUndefined();
    expect(bodyTextOf('[😀]', false)).toBe('[😀]');
  });

  it('checks that percent-escapes decode to UTF-8 and that no field has a forbidden name', () => {
    const opts = { forbiddenKeys: limits.forbiddenKeys };
    expect(checkFormText('a=caf%C3%A9&b=caf%c3%a9+%F0%9F%98%80&c=%ZZ&d=100%&e=é', opts)).toBeUndefined();
    for (const bad of ['a=%FF', 'a=%C3', 'a=%C3%C3', '%E9=1', 'a=%ED%A0%80', 'a=%C0%AF'])
      expect(checkFormText(bad, opts)).toBe('body is not valid UTF-8');
    expect(checkFormText('a=1&%5f_proto__=2', opts)).toBe('body contains the forbidden key "__proto__"');
  });
});

describe('nameForMessage', () => {
  it('cuts long names, shows control characters as ?, never ends on half a surrogate pair', () => {
    expect(nameForMessage('Name')).toBe('Name');
    expect(nameForMessage('a\u0000b\nc\u009f')).toBe('a?b?c?');
    expect(nameForMessage('x'.repeat(100_000))).toBe(`${'x'.repeat(64)}…`);
    expect(nameForMessage(`${'x'.repeat(63)}😀`)).toBe(`${'x'.repeat(63)}…`);
  });
});
