/** A Salesforce REST error entry. */
export interface SalesforceError {
  message: string;
  errorCode: string;
  fields: string[];
}

interface FieldType {
  kind: 'string' | 'boolean';
  label: string;
  maxLength?: number;
}

const text = (label: string, maxLength = 255): FieldType => ({ kind: 'string', label, maxLength });
const flag = (label: string): FieldType => ({ kind: 'boolean', label });

/** Case fields the sandbox org knows: standard web-to-case fields and the custom fields of the mapping. */
const CASE_FIELDS: Record<string, FieldType> = {
  Subject: text('Subject'),
  Status: text('Status', 40),
  Priority: text('Priority', 40),
  Type: text('Case Type', 40),
  Reason: text('Case Reason', 40),
  SuppliedName: text('Web Name', 80),
  SuppliedEmail: text('Web Email', 80),
  SuppliedPhone: text('Web Phone', 40),
  SuppliedCompany: text('Web Company', 80),
  Description: text('Description', 32_000),
  Origin: text('Case Origin', 40),
  Title__c: text('Title'),
  First_Name__c: text('First Name', 40),
  Last_Name__c: text('Last Name', 80),
  Mobile__c: text('Mobile'),
  Home_Phone__c: text('Home Phone'),
  Postcode__c: text('Postcode'),
  Privacy_Consent__c: flag('Privacy Consent'),
  Subscribe_To_Brand__c: flag('Subscribe To Brand'),
  Own_Brand__c: flag('Own Brand'),
  Site_Name__c: text('Site Name'),
  Origin_Detail__c: text('Origin Detail'),
  Frame_Number__c: text('Frame Number'),
};

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

const jsonKind = (value: unknown): string =>
  value === null
    ? 'VALUE_NULL'
    : typeof value === 'boolean'
      ? `VALUE_${String(value).toUpperCase()}`
      : typeof value === 'number'
        ? 'VALUE_NUMBER_INT'
        : typeof value === 'string'
          ? 'VALUE_STRING'
          : 'START_OBJECT';

/**
 * What Salesforce would refuse in an upsert body of Case, or an empty list. Messages follow Salesforce's
 * wording, including its habit of echoing offending values (the adapter must keep those out of its texts).
 *
 * @param creating a new case needs SuppliedEmail; an update may leave it out.
 * @param extraFields custom fields added to the org (for custom mappings in tests).
 * @example
 * caseProblems({ Foo__c: 'x' }, { externalIdField: 'Web_Case_Id__c', creating: true, extraFields: [] });
 * // [{ message: "No such column 'Foo__c' on sobject of type Case", errorCode: 'INVALID_FIELD', fields: [] }]
 */
export function caseProblems(
  body: Record<string, unknown>,
  context: { externalIdField: string; creating: boolean; extraFields: readonly string[] },
): SalesforceError[] {
  for (const [field, value] of Object.entries(body)) {
    if (field === context.externalIdField) {
      return [
        {
          message: `${field} is the external id of this upsert: it belongs in the URL, not in the body`,
          errorCode: 'INVALID_FIELD',
          fields: [field],
        },
      ];
    }
    const type = CASE_FIELDS[field] ?? (context.extraFields.includes(field) ? text(field) : undefined);
    if (!type) {
      return [
        {
          message: `No such column '${field}' on sobject of type Case`,
          errorCode: 'INVALID_FIELD',
          fields: [],
        },
      ];
    }
    if (typeof value !== type.kind) {
      return [
        {
          message: `Cannot deserialize instance of ${type.kind} from ${jsonKind(value)} value or request may be missing a required field`,
          errorCode: 'JSON_PARSER_ERROR',
          fields: [],
        },
      ];
    }
    if (type.maxLength !== undefined && (value as string).length > type.maxLength) {
      return [
        {
          message: `${type.label}: data value too large: ${value} (max length=${type.maxLength})`,
          errorCode: 'STRING_TOO_LONG',
          fields: [field],
        },
      ];
    }
  }
  if (context.creating && !body.SuppliedEmail) {
    return [
      {
        message: 'Required fields are missing: [SuppliedEmail]',
        errorCode: 'REQUIRED_FIELD_MISSING',
        fields: ['SuppliedEmail'],
      },
    ];
  }
  if (typeof body.SuppliedEmail === 'string' && !EMAIL.test(body.SuppliedEmail)) {
    return [
      {
        message: `Web Email: invalid email address: ${body.SuppliedEmail}`,
        errorCode: 'INVALID_EMAIL_ADDRESS',
        fields: ['SuppliedEmail'],
      },
    ];
  }
  return [];
}
