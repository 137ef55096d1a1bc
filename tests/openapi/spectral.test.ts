/**
 * openapi.json against Spectral's `spectral:oas` ruleset (the recommended OpenAPI rules), in-process through
 * @stoplight/spectral-core: no error. Warnings and hints are not failures here.
 */
import { readFileSync } from 'node:fs';
import spectralCore, { type RulesetDefinition } from '@stoplight/spectral-core';
import spectralParsers from '@stoplight/spectral-parsers';
import { oas } from '@stoplight/spectral-rulesets';
import { describe, expect, it } from 'vitest';

const { Spectral, Document } = spectralCore;
const { Json } = spectralParsers;

/** Spectral's severity of an error (0; 1 warning, 2 information, 3 hint). */
const ERROR = 0;

/** The errors `spectral:oas` finds in a document's text, as `<rule> at <path>: <message>`. */
const oasErrors = async (text: string): Promise<string[]> => {
  const spectral = new Spectral();
  spectral.setRuleset({ extends: [[oas as RulesetDefinition, 'recommended']] });
  const results = await spectral.run(new Document(text, Json, 'openapi.json'));
  return results
    .filter((result) => result.severity === ERROR)
    .map((result) => `${String(result.code)} at ${result.path.join('.')}: ${result.message}`);
};

const committed = readFileSync(new URL('../../openapi.json', import.meta.url), 'utf8');

describe("Spectral's spectral:oas ruleset", () => {
  it('finds no error in openapi.json', async () => {
    // Act
    const errors = await oasErrors(committed);
    // Assess
    expect(errors).toEqual([]);
  });

  it('finds the error planted in a copy (an array schema without items)', async () => {
    // Prepare
    const planted = JSON.parse(committed);
    planted.components.schemas.EventFeedPage.properties.events = { type: 'array' };
    // Act
    const errors = await oasErrors(JSON.stringify(planted, null, 2));
    // Assess
    expect(errors).toEqual([expect.stringMatching(/^array-items at components\.schemas\.EventFeedPage/)]);
  });
});
