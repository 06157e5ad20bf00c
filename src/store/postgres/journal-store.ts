import type { JournalWriting } from '../sql/journal-store.ts';
import type { EventWriter } from './event-writer.ts';

/**
 * How the PostgreSQL journal is written: through the store's event writer, in order with the runs'
 * events. One put `now` resolves once committed; one put `soon` is committed by the next `runs.secure()`,
 * which the runtime awaits before each model request. Reads first wait for what this process queued.
 */
export function postgresJournalWriting(writer: EventWriter): JournalWriting {
  return {
    beforeOpen: () => writer.flush(),
    beforeFind: () => writer.flush(),
    put(entry, now) {
      const committed = writer.enqueueJournal(entry);
      if (now) return committed;
      // Secured by the next `secure()`; a failure is the writer's to report, not an unhandled rejection.
      committed.catch(() => {});
    },
    begin: (attempt) => writer.enqueueAttempt(attempt),
  };
}
