/**
 * Record ids: derived, never random, so that a retry, a race or a duplicate names the same record. They must also
 * stay the same from one deployment to the next (a record accepted before a deploy is a duplicate after it), so
 * the derivations are pinned to known values here.
 */
import { describe, expect, it } from 'vitest';
import {
  canonicalJson,
  contentId,
  generationId,
  keyedId,
  legacyContentId,
  sha256,
} from '../../lib/intake/recordIds.ts';
import { RECORD_ID_PATTERN } from '../../lib/records/recordId.ts';

const ana = { firstName: 'Ana', surname: 'Silva', email: 'ana@example.com' };
/** Ana's content id under the key KEY, and her id before content ids were keyed (records stored then keep it). */
const KEY = 'test-content-id-key';
const ANA_ID = '13a41acd64eb2d2e334a38cd4437b871';
const LEGACY_ANA_ID = 'a876aab5151dbec73febeddabcf02ed8';

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

  it('a content id is 32 lower-case hex characters of the HMAC-SHA-256 of kind, owner and content, the same for every key order', () => {
    expect(contentId(KEY, 'caseRecord', ana, 'example-web-forms')).toBe(ANA_ID);
    expect(
      contentId(
        KEY,
        'caseRecord',
        { email: 'ana@example.com', surname: 'Silva', firstName: 'Ana' },
        'example-web-forms',
      ),
    ).toBe(ANA_ID);
    expect(ANA_ID).toMatch(new RegExp(RECORD_ID_PATTERN));
  });

  it('another owner or another kind is another record', () => {
    const ids = new Set([
      contentId(KEY, 'caseRecord', ana, 'example-web-forms'),
      contentId(KEY, 'caseRecord', ana, 'another-client'),
      contentId(KEY, 'salesRegistration', ana, 'example-web-forms'),
    ]);
    expect(ids.size).toBe(3);
  });

  it('a guess cannot be checked against an id without the key: the unkeyed hash confirms "Ana", the keyed id does not', () => {
    // Prepare: what a holder of an id and the kept fields tries: hash each guessed name with the rest.
    const guess = (firstName: string) => ({ ...ana, firstName });
    const unkeyed = (firstName: string) =>
      sha256(`caseRecord\nexample-web-forms\n${canonicalJson(guess(firstName))}`);
    // Act
    const confirmedBefore = ['Ann', 'Bob', 'Ana'].filter((name) => unkeyed(name).startsWith(LEGACY_ANA_ID));
    const id = contentId(KEY, 'caseRecord', ana, 'example-web-forms');
    const confirmedNow = ['Ann', 'Bob', 'Ana'].filter((name) => unkeyed(name).startsWith(id));
    const withAnotherKey = contentId('another-stage-key', 'caseRecord', ana, 'example-web-forms');
    // Assess: the old id named the person; the keyed one matches no guess, and another stage's key gives another id.
    expect(confirmedBefore).toEqual(['Ana']);
    expect(confirmedNow).toEqual([]);
    expect(withAnotherKey).not.toBe(id);
  });

  it('the id before content ids were keyed is still derived, to recognise repeats of content stored under it', () => {
    expect(legacyContentId('caseRecord', ana, 'example-web-forms')).toBe(LEGACY_ANA_ID);
  });

  it('generation 0 is the first id; later generations are derived from it, each its own', () => {
    expect(generationId(LEGACY_ANA_ID, 0)).toBe(LEGACY_ANA_ID);
    expect(generationId(LEGACY_ANA_ID, 1)).toBe('bbfd4cda9ce864e54e9efc220b97801b');
    expect(generationId(LEGACY_ANA_ID, 2)).toBe('fb8347432658ff8517a213ce8fefaf8a');
  });

  it('a keyed id is derived from the key hash and the content id', () => {
    expect(keyedId(sha256('example-web-forms\nkey-1'), LEGACY_ANA_ID)).toBe(
      '4040ee10f3c700cf154204a3cd9dddfb',
    );
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
