import { DatabaseSync } from 'node:sqlite';
import { parentPort, workerData } from 'node:worker_threads';

/**
 * Copies the WAL into the database file every `intervalMs`, on this thread, so the fsyncs a checkpoint
 * needs never hold the main thread's event loop (see checkpointer.ts). PASSIVE: it never waits for
 * readers or writers, and what it cannot copy now it copies next time.
 */
const { path, intervalMs } = workerData as { path: string; intervalMs: number };
const db = new DatabaseSync(path);
db.exec('PRAGMA busy_timeout = 1000');
db.exec('PRAGMA synchronous = NORMAL');

const timer = setInterval(() => {
  try {
    db.exec('PRAGMA wal_checkpoint(PASSIVE)');
  } catch {
    // Busy or the file went away: the next turn tries again, and the main connection's own
    // auto-checkpoint is the safety net.
  }
}, intervalMs);

parentPort?.on('message', (message) => {
  if (message !== 'stop') return;
  clearInterval(timer);
  db.close();
  parentPort?.close();
});
