/**
 * Loaded with `--import` by the start-up benchmarks: writes the process's peak resident memory (KB) to
 * `BENCH_MAX_RSS_FILE` as it exits, so the figure needs no /usr/bin/time.
 */
import { writeFileSync } from 'node:fs';

const file = process.env.BENCH_MAX_RSS_FILE;
if (file) process.on('exit', () => writeFileSync(file, String(process.resourceUsage().maxRSS)));
