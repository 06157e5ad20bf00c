let installed = false;

/**
 * `cadre runs list | head -3`: when the reader goes away, the next write fails with EPIPE. That is the
 * reader's choice, not an error of Cadre's: leave quietly, as Unix tools do, instead of printing a stack.
 */
export function exitQuietlyOnClosedPipe(): void {
  if (installed) return;
  installed = true;
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
      throw error;
    });
  }
}
