import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  CaseMappingError,
  createCrmClient,
  crmConfigFromEnv,
  DEFAULT_CASE_MAPPING,
  loadCaseMapping,
  mapCase,
  parseCaseMapping,
} from '../../lib/downstream/crm/index.ts';
import type { SalesforceSandbox } from '../../sandbox/salesforceSandbox.ts';
import { startSalesforceSandbox } from '../../sandbox/salesforceSandbox.ts';
import { fullCase, fullCaseSalesforceBody, minimalCase } from './fixtures.ts';

const tempFile = (content: string): string => {
  const path = join(mkdtempSync(join(tmpdir(), 'case-mapping-')), 'mapping.json');
  writeFileSync(path, content);
  return path;
};

describe('mapCase with the shipped default mapping', () => {
  it('maps every field of the default mapping (docs/behaviour.md#salesforce-protocol)', () => {
    // Act
    const body = mapCase(fullCase(), DEFAULT_CASE_MAPPING);

    // Assess
    expect(body).toStrictEqual(fullCaseSalesforceBody);
  });

  it('leaves absent fields out, keeps false, and takes homePhone when there is no mobile', () => {
    // Act
    const body = mapCase(
      minimalCase({ homePhone: '09 555 0123', privacyConsent: false }),
      DEFAULT_CASE_MAPPING,
    );

    // Assess
    expect(body).toStrictEqual({
      SuppliedName: 'Aroha Ngata-Whitfield',
      SuppliedEmail: 'aroha.ngata@example.org',
      SuppliedPhone: '09 555 0123',
      Origin: 'Web',
      First_Name__c: 'Aroha',
      Last_Name__c: 'Ngata-Whitfield',
      Home_Phone__c: '09 555 0123',
      Privacy_Consent__c: false,
    });
  });
});

describe('mapCase rules', () => {
  it('joins the parts present and leaves the field out when none is', () => {
    // Prepare
    const mapping = parseCaseMapping({ Name__c: { join: ['title', 'surname'], separator: '/' } }, 'test');

    // Act
    const both = mapCase(minimalCase({ title: 'Dr' }), mapping);
    const one = mapCase(minimalCase(), mapping);
    const none = mapCase({ ...minimalCase(), surname: '' }, mapping);

    // Assess
    expect(both).toEqual({ Name__c: 'Dr/Ngata-Whitfield' });
    expect(one).toEqual({ Name__c: 'Ngata-Whitfield' });
    expect(none).toEqual({});
  });

  it('takes the first present field, and a constant of any JSON scalar type', () => {
    // Prepare
    const mapping = parseCaseMapping(
      { Phone__c: { firstOf: ['mobile', 'homePhone'] }, Priority: { const: 'High' }, Score__c: { const: 3 } },
      'test',
    );

    // Act
    const body = mapCase(minimalCase(), mapping);

    // Assess
    expect(body).toEqual({ Priority: 'High', Score__c: 3 });
  });
});

describe('mapCase maxLength', () => {
  it('cuts text values to maxLength, never inside a character pair, and leaves booleans alone', () => {
    // Prepare
    const mapping = parseCaseMapping(
      {
        Name__c: { join: ['firstName', 'surname'], maxLength: 8 },
        Note__c: { field: 'comments', maxLength: 3 },
        Consent__c: { field: 'privacyConsent', maxLength: 1 },
      },
      'test',
    );

    // Act
    const body = mapCase(minimalCase({ comments: 'ab😀cd', privacyConsent: true }), mapping);

    // Assess
    expect(body).toStrictEqual({ Name__c: 'Aroha Ng', Note__c: 'ab', Consent__c: true });
  });
});

describe('parseCaseMapping', () => {
  it.each([
    [[], 'case mapping test: must be a JSON object of Salesforce field to rule'],
    [{}, 'case mapping test: has no entries'],
    [
      { 'Bad Name': { field: 'email' } },
      'case mapping test: entry "Bad Name" is not a Salesforce field name',
    ],
    [{ SuppliedEmail: 'email' }, 'entry "SuppliedEmail": must be an object such as {"field": "email"}'],
    [
      { SuppliedEmail: { field: 'e-mail' } },
      'entry "SuppliedEmail": "field" must be one of title, firstName',
    ],
    [{ SuppliedEmail: { field: 'email', const: 'x' } }, 'entry "SuppliedEmail": must have exactly one of'],
    [
      { SuppliedEmail: {} },
      'entry "SuppliedEmail": must have exactly one of "field", "join", "firstOf", "const"',
    ],
    [{ SuppliedPhone: { firstOf: [] } }, 'entry "SuppliedPhone": "firstOf" must be a non-empty array'],
    [
      { SuppliedName: { join: ['firstName', 'lastName'] } },
      'entry "SuppliedName": "join" names "lastName", which is not one of',
    ],
    [
      { SuppliedName: { join: ['firstName'], separator: 1 } },
      'entry "SuppliedName": "separator" must be a string',
    ],
    [
      { SuppliedName: { field: 'email', separator: ' ' } },
      'entry "SuppliedName": has an unknown key "separator"',
    ],
    [{ Origin: { const: null } }, 'entry "Origin": "const" must be a string, number or boolean'],
    [{ Origin: { const: 'Web', maxLength: 3 } }, 'entry "Origin": has an unknown key "maxLength"'],
    [
      { SuppliedName: { field: 'surname', maxLength: 0 } },
      'entry "SuppliedName": "maxLength" must be a positive integer',
    ],
  ])('refuses %j naming the bad entry', (document, message) => {
    // Act
    const parse = () => parseCaseMapping(document, 'test');

    // Assess
    expect(parse).toThrow(CaseMappingError);
    expect(parse).toThrow(message);
  });

  it('skips $-keys, which are comments', () => {
    // Act
    const mapping = parseCaseMapping({ $comment: 'why', Origin: { const: 'Web' } }, 'test');

    // Assess
    expect(mapping).toEqual({ Origin: { const: 'Web' } });
  });
});

describe('loadCaseMapping and CRM_CASE_MAPPING_FILE', () => {
  let sf: SalesforceSandbox | undefined;
  afterEach(async () => {
    await sf?.stop();
    sf = undefined;
  });

  it('names the file when it is missing or not JSON', () => {
    // Prepare
    const notJson = tempFile('{ "Origin": ');

    // Act
    const missing = () => loadCaseMapping('/nonexistent/mapping.json');
    const broken = () => loadCaseMapping(notJson);

    // Assess
    expect(missing).toThrow('case mapping /nonexistent/mapping.json: cannot be read (ENOENT)');
    expect(broken).toThrow(`case mapping ${notJson}: is not valid JSON`);
  });

  it('refuses a start with a bad mapping file, naming the entry', () => {
    // Prepare
    const path = tempFile(JSON.stringify({ SuppliedEmail: { field: 'mail' } }));

    // Act
    const read = () =>
      crmConfigFromEnv({
        CRM_BASE_URL: 'https://x.my.salesforce.com',
        CRM_CLIENT_ID: 'i',
        CRM_CLIENT_SECRET: 's',
        CRM_CASE_MAPPING_FILE: path,
      });

    // Assess
    expect(read).toThrow(`case mapping ${path}: entry "SuppliedEmail": "field" must be one of`);
  });

  it('delivers the body of a custom mapping file end to end', async () => {
    // Prepare
    sf = await startSalesforceSandbox({ extraFields: ['Customer_Name__c', 'Contact_Phone__c'] });
    const path = tempFile(
      JSON.stringify({
        $comment: 'a smaller mapping',
        SuppliedEmail: { field: 'email' },
        Customer_Name__c: { join: ['surname', 'firstName'], separator: ', ' },
        Contact_Phone__c: { firstOf: ['homePhone', 'mobile'] },
        Origin: { const: 'Dealer web' },
        Privacy_Consent__c: { field: 'privacyConsent' },
      }),
    );
    const config = crmConfigFromEnv({
      CRM_BASE_URL: sf.url,
      CRM_CLIENT_ID: sf.clientId,
      CRM_CLIENT_SECRET: sf.clientSecret,
      CRM_CASE_MAPPING_FILE: path,
    });

    // Act
    const outcome = await createCrmClient(config).upsertCase(
      minimalCase({ mobile: '021 555 0199', privacyConsent: false }),
      'case-0001',
    );

    // Assess
    expect(outcome.kind).toBe('delivered');
    expect(sf.cases[0].fields).toStrictEqual({
      SuppliedEmail: 'aroha.ngata@example.org',
      Customer_Name__c: 'Ngata-Whitfield, Aroha',
      Contact_Phone__c: '021 555 0199',
      Origin: 'Dealer web',
      Privacy_Consent__c: false,
    });
  });

  it('gets a permanent refusal when a mapping names a field the org does not have', async () => {
    // Prepare
    sf = await startSalesforceSandbox();
    const crm = createCrmClient({
      baseUrl: sf.url,
      clientId: sf.clientId,
      clientSecret: sf.clientSecret,
      mapping: parseCaseMapping(
        { SuppliedEmail: { field: 'email' }, Vehicle__c: { field: 'frameNo' } },
        'test',
      ),
    });

    // Act
    const outcome = await crm.upsertCase(fullCase(), 'case-0001');

    // Assess
    expect(outcome).toEqual({
      kind: 'permanent',
      error: "No such column 'Vehicle__c' on sobject of type Case",
      reachedDownstream: true,
    });
  });
});
