import { describe, expect, it } from 'vitest';
import { CrmConfigError, crmConfigFromEnv } from '../../lib/downstream/crm/index.ts';

const env = {
  CRM_BASE_URL: 'https://example.my.salesforce.com',
  CRM_CLIENT_ID: '3MVG9-client',
  CRM_CLIENT_SECRET: 'secret',
};

describe('crmConfigFromEnv', () => {
  it('reads the settings with the defaults of docs/behaviour.md#salesforce-protocol', () => {
    // Act
    const config = crmConfigFromEnv(env);

    // Assess
    expect(config).toEqual({
      baseUrl: 'https://example.my.salesforce.com',
      clientId: '3MVG9-client',
      clientSecret: 'secret',
      apiVersion: 'v66.0',
      externalIdField: 'Web_Case_Id__c',
    });
  });

  it('reads CRM_API_VERSION and CRM_CASE_EXTERNAL_ID_FIELD', () => {
    // Act
    const config = crmConfigFromEnv({
      ...env,
      CRM_API_VERSION: 'v62.0',
      CRM_CASE_EXTERNAL_ID_FIELD: 'Form_Id__c',
    });

    // Assess
    expect(config).toMatchObject({ apiVersion: 'v62.0', externalIdField: 'Form_Id__c' });
  });

  it.each([
    [{ CRM_BASE_URL: undefined }, 'setting CRM_BASE_URL is not set'],
    [{ CRM_BASE_URL: 'example.my.salesforce.com' }, 'setting CRM_BASE_URL is not an http(s) URL'],
    [{ CRM_CLIENT_ID: '' }, 'setting CRM_CLIENT_ID is not set'],
    [{ CRM_CLIENT_SECRET: ' ' }, 'setting CRM_CLIENT_SECRET is not set'],
    [{ CRM_API_VERSION: '66' }, 'setting CRM_API_VERSION must look like v66.0'],
    [
      { CRM_CASE_EXTERNAL_ID_FIELD: 'Web Case' },
      'setting CRM_CASE_EXTERNAL_ID_FIELD is not a Salesforce field name',
    ],
  ])('refuses %o with "%s"', (change, message) => {
    // Act
    const read = () => crmConfigFromEnv({ ...env, ...change });

    // Assess
    expect(read).toThrow(CrmConfigError);
    expect(read).toThrow(message);
  });
});
