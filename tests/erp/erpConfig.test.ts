import { describe, expect, it } from 'vitest';
import { erpEndpoints } from '../../lib/downstream/erp/endpoints.ts';
import {
  DEFAULT_ERP_SERVICE_PATH,
  ErpConfigError,
  erpConfigFromEnv,
} from '../../lib/downstream/erp/index.ts';

const env = {
  ERP_BASE_URL: 'https://erp.example.com',
  ERP_USERNAME: 'WEBGW',
  ERP_PASSWORD: ' s3cret ',
};

describe('erpConfigFromEnv', () => {
  it('reads the settings with the default service path and no sap-client', () => {
    // Act
    const config = erpConfigFromEnv(env);

    // Assess
    expect(config).toEqual({
      baseUrl: 'https://erp.example.com',
      servicePath: DEFAULT_ERP_SERVICE_PATH,
      username: 'WEBGW',
      password: ' s3cret ',
      batchSize: 50,
    });
    expect(DEFAULT_ERP_SERVICE_PATH).toBe(
      '/sap/opu/odata/sap/ZSD_SALES_REGISTRATION_SRV/SalesRegistrationSet',
    );
  });

  it('reads ERP_SERVICE_PATH and ERP_SAP_CLIENT', () => {
    // Act
    const config = erpConfigFromEnv({
      ...env,
      ERP_SERVICE_PATH: '/sap/opu/odata/sap/Z_SRV/RegSet',
      ERP_SAP_CLIENT: '100',
    });

    // Assess
    expect(config).toMatchObject({ servicePath: '/sap/opu/odata/sap/Z_SRV/RegSet', sapClient: '100' });
  });

  it.each([
    [{ ERP_BASE_URL: undefined }, 'setting ERP_BASE_URL is not set'],
    [{ ERP_BASE_URL: 'erp.example.com' }, 'setting ERP_BASE_URL is not an http(s) URL'],
    [{ ERP_BASE_URL: 'ftp://erp.example.com' }, 'setting ERP_BASE_URL is not an http(s) URL'],
    [{ ERP_USERNAME: ' ' }, 'setting ERP_USERNAME is not set'],
    [{ ERP_PASSWORD: '' }, 'setting ERP_PASSWORD is not set'],
    [{ ERP_SERVICE_PATH: 'sap/opu' }, 'setting ERP_SERVICE_PATH must start with /'],
  ])('refuses %o with "%s"', (change, message) => {
    // Act
    const read = () => erpConfigFromEnv({ ...env, ...change });

    // Assess
    expect(read).toThrow(ErpConfigError);
    expect(read).toThrow(message);
  });
});

describe('erpEndpoints', () => {
  it('derives the service root from the entity set path', () => {
    // Act
    const endpoints = erpEndpoints({ ...erpConfigFromEnv(env), sapClient: '100' });

    // Assess
    expect(endpoints.entitySet.href).toBe(
      'https://erp.example.com/sap/opu/odata/sap/ZSD_SALES_REGISTRATION_SRV/SalesRegistrationSet?sap-client=100',
    );
    expect(endpoints.serviceRoot.href).toBe(
      'https://erp.example.com/sap/opu/odata/sap/ZSD_SALES_REGISTRATION_SRV/?sap-client=100',
    );
    expect(endpoints.batch.href).toBe(
      'https://erp.example.com/sap/opu/odata/sap/ZSD_SALES_REGISTRATION_SRV/$batch?sap-client=100',
    );
    expect(endpoints.entitySetName).toBe('SalesRegistrationSet');
  });
});

describe('ERP_BATCH_SIZE', () => {
  it('reads ERP_BATCH_SIZE and refuses a bad one by name and rule', () => {
    // Act / Assess
    expect(erpConfigFromEnv({ ...env, ERP_BATCH_SIZE: '20' }).batchSize).toBe(20);
    for (const bad of ['0', '-1', '2.5', 'x', '1001']) {
      expect(() => erpConfigFromEnv({ ...env, ERP_BATCH_SIZE: bad })).toThrow(
        'setting ERP_BATCH_SIZE must be a whole number from 1 to 1000',
      );
    }
  });
});
