#!/usr/bin/env node
// Cadre runs its TypeScript sources directly, which needs Node 24. On an older Node, re-run this same
// command with the Node 24 that the package's devDependency installs, if it is there.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import module from 'node:module';
import { fileURLToPath } from 'node:url';

const major = Number(process.versions.node.split('.')[0]);
const entry = fileURLToPath(new URL('../src/cli/main.ts', import.meta.url));
const args = process.argv.slice(2);
if (args.length === 1 && ['--version', '-v', 'version'].includes(args[0])) {
  // Answered before anything else loads, on any Node: Node starting is all this should cost (main.ts
  // answers it the same way for callers in code).
  const manifest = readFileSync(new URL('../package.json', import.meta.url), 'utf8');
  process.stdout.write(`${JSON.parse(manifest).version}\n`);
} else if (major >= 24) {
  // Node keeps each module's compiled code (and, for the TypeScript sources, their stripped text) in a
  // cache folder, so a second run starts without compiling ~600 modules again (NODE_DISABLE_COMPILE_CACHE=1
  // turns it off).
  module.enableCompileCache?.();
  const { restartWithNodeFlags, tuneHeapForCommand } = await import('../src/cli/node-flags.ts');
  restartWithNodeFlags(process.argv.slice(2));
  tuneHeapForCommand(process.argv.slice(2));
  const { main } = await import(entry);
  process.exitCode = await main(process.argv.slice(2));
} else {
  const local = fileURLToPath(new URL('../node_modules/node/bin/node', import.meta.url));
  if (!existsSync(local)) {
    console.error(
      `cadre needs Node.js 24 or newer (this is ${process.version}). Run "npm install" in the cadre folder, or install Node 24.`,
    );
    process.exit(2);
  }
  // A process manager stops this process, not the child doing the work: pass its signals on, and leave
  // with the child's exit code (or its signal) once it has stopped.
  // A channel to the child tells it when this process is gone, even killed with SIGKILL (which cannot be
  // passed on): it then stops as on SIGTERM, so no worker or server is left running behind a dead pid.
  // A server still gets its own Node flags (the child cannot re-exec itself with a channel open).
  const serveFlags =
    args[0] === 'serve' && !/semi[-_]space/.test(process.env.NODE_OPTIONS ?? '')
      ? ['--max-semi-space-size=16']
      : [];
  const child = spawn(local, [...serveFlags, entry, ...args], {
    stdio: ['inherit', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, CADRE_WRAPPER_PID: String(process.pid) },
  });
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => {
    if (!signal) process.exit(code ?? 1);
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
  });
}
