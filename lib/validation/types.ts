/** One problem found in a request, for people to read. */
export interface Problem {
  /** Index of the record in a sales registration array; absent for a single case or the body as a whole. */
  index?: number;
  /** The field by its API name; absent when the problem is about the record or body as a whole. */
  field?: string;
  /** The rule, phrased to follow the field name: `is required`, `must be at most 40 characters`. */
  rule: string;
}

/** Result of validating and normalising a request body. */
export type ValidationResult<T> = { ok: true; value: T } | { ok: false; problems: Problem[] };
