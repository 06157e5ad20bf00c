import type { JournalWriting } from '../sql/journal-store.ts';
import type { EventWriter } from './event-writer.ts';

/**
 * How the SQLite journal is written: an entry is secured in the event writer's spool before `put`
 * returns (or, with `soon`, with the step's events) and reaches the table with the writer's next slice,
 * in order with the run's events; either survives a SIGKILL. `recoverDeadSpools` applies what processes
 * that died since this store opened left in their spools (see spool.ts): a long-lived process (`cadre
 * serve`) resuming a tree another one (`cadre ask`) was running when it was killed needs that tree's last
 * entries and events. `find` (how a resume starts) applies them; `open` of a fresh journal stays off the
 * disk.
 */
export function sqliteJournalWriting(writer: EventWriter, recoverDeadSpools: () => void): JournalWriting {
  return {
    beforeOpen(journalId) {
      if (writer.holdsJournal(journalId)) writer.applyNow();
    },
    beforeFind() {
      recoverDeadSpools();
      if (writer.holdsAttempt()) writer.applyNow();
    },
    put: (entry, now) => writer.enqueueJournal(entry, now),
    begin: (attempt) => writer.enqueueAttempt(attempt),
  };
}
