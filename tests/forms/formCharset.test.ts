import { parse } from 'node:querystring';
import { describe, expect, it } from 'vitest';
import { formEncodingOf, transcodeForm } from '../../lib/forms/formCharset.ts';

describe('formEncodingOf', () => {
  it.each([
    ['UTF-8', 'utf-8'],
    ['utf8', 'utf-8'],
    ['ISO-8859-1', 'windows-1252'],
    ['iso_8859-1', 'windows-1252'],
    ['latin1', 'windows-1252'],
    ['Windows-1252', 'windows-1252'],
    ['cp1252', 'windows-1252'],
    [' us-ascii ', 'windows-1252'],
  ])('reads %s as %s, as browsers do', (label, encoding) => {
    expect(formEncodingOf(label)).toBe(encoding);
  });

  it.each(['koi8-r', 'Shift_JIS', 'utf-16le', 'iso-8859-2', 'windows-1251', 'klingon', ''])(
    'knows no form encoding %j',
    (label) => {
      expect(formEncodingOf(label)).toBeUndefined();
    },
  );
});

describe('transcodeForm', () => {
  it('turns windows-1252 escapes into the characters they are, keeping the form structure', () => {
    const text = 'comments=5000+%80+caf%E9+%26+cr%E8me+%3D+%2B1+100%25&firstName=Zo%E9';
    const out = transcodeForm(text, 'windows-1252');
    expect(out).toBe('comments=5000+€+café+%26+crème+%3D+%2B1+100%25&firstName=Zoé');
    expect(parse(out)).toEqual({ comments: '5000 € café & crème = +1 100%', firstName: 'Zoé' });
  });

  it('keeps ASCII control characters (a textarea newline) escaped', () => {
    expect(transcodeForm('comments=a%0D%0Ab%09%7F', 'windows-1252')).toBe('comments=a%0D%0Ab%09%7F');
  });

  it('never makes a body longer in UTF-8 bytes', () => {
    const every = Array.from({ length: 256 }, (_, byte) => `%${byte.toString(16).padStart(2, '0')}`).join('');
    const text = `all=${every}`;
    const out = transcodeForm(text, 'windows-1252');
    expect(Buffer.byteLength(out, 'utf8')).toBeLessThanOrEqual(Buffer.byteLength(text, 'utf8'));
    expect([...(parse(out).all as string)].length).toBe(256);
  });

  it('leaves characters sent unescaped and malformed escapes as they are', () => {
    expect(transcodeForm('a=é%ZZ%4', 'windows-1252')).toBe('a=é%ZZ%4');
  });
});
