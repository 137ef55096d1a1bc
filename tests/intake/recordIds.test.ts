/**
 * Record ids: derived, never random, so that a retry, a race or a duplicate names the same record. They must also
 * stay the same from one deployment to the next (a record accepted before a deploy is a duplicate after it), so
 * the derivations are pinned to known values here.
 */
import { describe, expect, it } from 'vitest';
import { canonicalJson, contentId, generationId, keyedId, sha256 } from '../../lib/intake/recordIds.ts';
import { RECORD_ID_PATTERN } from '../../lib/records/recordId.ts';

const ana = { firstName: 'Ana', surname: 'Silva', email: 'ana@example.com' };
const ANA_ID = 'a876aab5151dbec73febeddabcf02ed8';

describe('canonicalJson', () => {
  it('sorts keys at every level, inside arrays too, and keeps array order', () => {
    expect(canonicalJson({ b: [{ d: 1, c: null }, 2], a: 'x"y' })).toBe(
      '{"a":"x\\"y","b":[{"c":null,"d":1},2]}',
    );
    expect(canonicalJson({ z: 1, m: { y: 2, b: 3 }, a: [] })).toBe('{"a":[],"m":{"b":3,"y":2},"z":1}');
  });

  it('leaves out undefined values, as JSON would, and keeps null, false, 0 and empty text', () => {
    expect(canonicalJson({ u: undefined, n: null, f: false, z: 0, e: '' })).toBe(
      '{"e":"","f":false,"n":null,"z":0}',
    );
  });

  it('writes plain values as JSON does', () => {
    expect([canonicalJson('a'), canonicalJson(1.5), canonicalJson(null), canonicalJson(true)]).toEqual([
      '"a"',
      '1.5',
      'null',
      'true',
    ]);
  });

  it('gives equal content in another key order the same text', () => {
    expect(canonicalJson({ surname: 'Silva', email: 'ana@example.com', firstName: 'Ana' })).toBe(
      canonicalJson(ana),
    );
  });
});

describe('record ids', () => {
  it('sha256 is the hex SHA-256', () => {
    expect(sha256('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it('a content id is 32 lower-case hex characters of kind, owner and content, the same for every key order', () => {
    expect(contentId('caseRecord', ana, 'example-web-forms')).toBe(ANA_ID);
    expect(
      contentId(
        'caseRecord',
        { email: 'ana@example.com', surname: 'Silva', firstName: 'Ana' },
        'example-web-forms',
      ),
    ).toBe(ANA_ID);
    expect(ANA_ID).toMatch(new RegExp(RECORD_ID_PATTERN));
  });

  it('another owner or another kind is another record', () => {
    const ids = new Set([
      contentId('caseRecord', ana, 'example-web-forms'),
      contentId('caseRecord', ana, 'another-client'),
      contentId('salesRegistration', ana, 'example-web-forms'),
    ]);
    expect(ids.size).toBe(3);
  });

  it('generation 0 is the first id; later generations are derived from it, each its own', () => {
    expect(generationId(ANA_ID, 0)).toBe(ANA_ID);
    expect(generationId(ANA_ID, 1)).toBe('bbfd4cda9ce864e54e9efc220b97801b');
    expect(generationId(ANA_ID, 2)).toBe('fb8347432658ff8517a213ce8fefaf8a');
  });

  it('a keyed id is derived from the key hash and the content id', () => {
    expect(keyedId(sha256('example-web-forms\nkey-1'), ANA_ID)).toBe('4040ee10f3c700cf154204a3cd9dddfb');
  });

  it('RECORD_ID_PATTERN takes 32 lower-case hex characters and nothing else', () => {
    const pattern = new RegExp(RECORD_ID_PATTERN);
    expect(['a'.repeat(32), '0123456789abcdef'.repeat(2)].map((id) => pattern.test(id))).toEqual([
      true,
      true,
    ]);
    expect(
      ['a'.repeat(31), 'a'.repeat(33), 'A'.repeat(32), `x${'a'.repeat(32)}`].map((id) => pattern.test(id)),
    ).toEqual([false, false, false, false]);
  });
});
