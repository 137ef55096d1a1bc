import { CASE_FIELD_CLASSES } from '../../privacy/fieldClassification.ts';
import type { CaseRecord } from '../../types.ts';

export const DEFAULT_CRM_API_VERSION = 'v66.0';
export const DEFAULT_CASE_EXTERNAL_ID_FIELD = 'Web_Case_Id__c';

/** Downstream calls time out after 10 s (docs/behaviour.md#delivery-and-retries). */
export const DEFAULT_CRM_TIMEOUT_MS = 10_000;

/**
 * Every field of a normalised case: a mapping file may only name these. The one classification's list
 * (lib/privacy/fieldClassification.ts), typed so that the compiler complains when {@link CaseRecord} gains or loses
 * a field.
 */
export const CASE_FIELDS = Object.keys(CASE_FIELD_CLASSES) as (keyof CaseRecord)[];

/** Salesforce API field names: a letter, then letters, digits and underscores (custom ones end in __c). */
export const SALESFORCE_FIELD_PATTERN = /^[A-Za-z][A-Za-z0-9_]*$/;
