/**
 * The SAP sandbox's stored registrations, found by RegistrationId and by FrameNum in constant time: the sandbox
 * refuses a repeat of either with 409, and a bench's backfill of 100,000 made a scan of the list per create the
 * sandbox's own bottleneck (each create slower than the last, and a later run slower than an earlier one).
 */
import type { StoredRegistration } from './sapTypes.ts';

const FIRST_DOCUMENT_NUMBER = 49_000_001;

/**
 * Registrations in the order stored, with their two keys.
 *
 * @example
 * const book = new RegistrationBook();
 * book.add({ DocumentNumber: book.nextDocumentNumber(), RegistrationId: 'r1', FrameNum: 'F1', entity, createdAt });
 * book.withId('r1')?.DocumentNumber // '49000001'
 */
export class RegistrationBook {
  /** Every registration stored, in order (the sandbox's `registrations`). */
  readonly all: StoredRegistration[] = [];
  private readonly byId = new Map<unknown, StoredRegistration>();
  private readonly byFrame = new Map<unknown, StoredRegistration>();

  /** The stored registration with this RegistrationId, if any. */
  withId(id: unknown): StoredRegistration | undefined {
    return this.byId.get(id);
  }

  /** The stored registration of this frame number, if any. */
  withFrame(frame: unknown): StoredRegistration | undefined {
    return this.byFrame.get(frame);
  }

  /** The DocumentNumber the next registration stored gets. */
  nextDocumentNumber(): string {
    return String(FIRST_DOCUMENT_NUMBER + this.all.length);
  }

  add(stored: StoredRegistration): void {
    this.all.push(stored);
    this.byId.set(stored.RegistrationId, stored);
    this.byFrame.set(stored.FrameNum, stored);
  }
}
