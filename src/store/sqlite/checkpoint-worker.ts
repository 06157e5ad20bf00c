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

const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
/** Quick retries of a checkpoint that the main connection's writes overtook. */
const RETRIES = 5;
const RETRY_MS = 5;

/**
 * One checkpoint, tried again a few milliseconds later while writes keep overtaking it. Only a checkpoint
 * that copies every frame lets the next write start the WAL from its beginning; one that never completes
 * while runs stream lets the WAL grow until the main connection's fallback checkpoint (and its fsync)
 * runs on the event loop: measured 10-12 ms stalls every ~40 MB written.
 */
function checkpointFully(retriesLeft: number): void {
  try {
    const { log, checkpointed } = checkpoint.get() as { log: number; checkpointed: number };
    if (checkpointed < log && retriesLeft > 0) setTimeout(() => checkpointFully(retriesLeft - 1), RETRY_MS);
  } catch {
    // Busy or the file went away: the next turn tries again, and the main connection's own
    // auto-checkpoint is the safety net.
  }
}

const timer = setInterval(() => checkpointFully(RETRIES), intervalMs);

parentPort?.on('message', (message) => {
  if (message !== 'stop') return;
  clearInterval(timer);
  db.close();
  parentPort?.close();
});
