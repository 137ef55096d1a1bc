/** Bad arguments: the script prints the message and its usage, and exits with code 2 (one class for every tool). */
export { UsageError } from '../cli/commandLine.ts';

/** Nothing to read from: no running `npm start` (or its endpoint does not answer). Exit code 1. */
export class NoServiceError extends Error {
  override name = 'NoServiceError';
}

/** The record asked for does not exist. Exit code 1. */
export class RecordNotFoundError extends Error {
  override name = 'RecordNotFoundError';
}
