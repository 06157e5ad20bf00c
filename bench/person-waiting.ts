/**
 * What a person waits for (issue 24), each measured in fresh processes against a local scripted
 * OpenAI-compatible server, the median of `BENCH_PROCESS_RUNS` runs (default 5), beside a plain AI SDK
 * program doing the same (`sdk-ask.ts`): time to the first model request, a one-delegation `cadre ask`'s
 * wall time and peak memory, the first `calculate` in a process, four sub-agents in parallel against the
 * ideal, `cadre --version`, and the bytes of the web app's first load. Run alone with
 * `npx node bench/person-waiting.ts`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { contentText, type FixtureScript, startOpenAIServer } from '../test/fixtures/openai-server.ts';
import { CADRE_BIN, measureProcess, median, type ProcessFigures } from './cli-process.ts';

const SDK_ASK = new URL('./sdk-ask.ts', import.meta.url).pathname;
const isMain = (system: string) => system.includes('## When to delegate');
const isMath = (system: string) => system.includes("Cadre's maths sub-agent");
const lastRole = (messages: Array<{ role: string }>) => messages.at(-1)?.role;

/** Main answers at once. */
const hello: FixtureScript = () => ({ text: 'Hello.' });

/** Main delegates to math, which calls `calculate` twice (one step each), then both answer. */
const oneDelegation: FixtureScript = ({ body, system }) => {
  const toolResults = body.messages.filter((message) => message.role === 'tool').length;
  if (isMath(system)) {
    if (toolResults === 0)
      return { toolCalls: [{ name: 'calculate', arguments: { expression: '17 * 23' } }] };
    if (toolResults === 1)
      return { toolCalls: [{ name: 'calculate', arguments: { expression: '391 / 17' } }] };
    return { text: '17 * 23 = 391, and 391 / 17 = 23.' };
  }
  if (lastRole(body.messages) === 'user')
    return { toolCalls: [{ name: 'math', arguments: { task: 'Compute 17 * 23, then divide by 17.' } }] };
  return { text: '391, and back to 23.' };
};

const STEP_MS = 400;
/** Main (instant) asks four math sub-agents at once; each calls `calculate` once; their steps take 400 ms. */
function fanOut(expression: (n: number) => string): FixtureScript {
  return ({ body, system }) => {
    if (isMath(system)) {
      const task = contentText(body.messages.find((message) => message.role === 'user')?.content);
      const n = Number(/(\d+)/.exec(task)?.[1] ?? 1);
      if (lastRole(body.messages) === 'tool') return { text: 'done', delayMs: STEP_MS };
      return {
        toolCalls: [{ name: 'calculate', arguments: { expression: expression(n) } }],
        delayMs: STEP_MS,
      };
    }
    if (lastRole(body.messages) === 'user')
      return { toolCalls: [1, 2, 3, 4].map((n) => ({ name: 'math', arguments: { task: `Work on ${n}.` } })) };
    return { text: 'All four done.' };
  };
}

interface Sampled {
  firstRequestMs: number;
  wallMs: number;
  maxRssMb: number;
  /** Server-side window from main's delegating answer to its last request (fan-out only). */
  windowMs: number;
  /** The first `calculate`'s own time, as the run recorded it (delegation only). */
  firstCalculateMs: number;
}

async function sample(
  command: 'cadre' | 'sdk',
  script: FixtureScript,
  question: string,
  extraEnv: Record<string, string> = {},
): Promise<Sampled> {
  const server = await startOpenAIServer(script);
  const env = { CADRE_MODEL: 'compatible:fixture', CADRE_COMPATIBLE_BASE_URL: server.baseURL, ...extraEnv };
  let figures: ProcessFigures;
  try {
    figures =
      command === 'cadre'
        ? await measureProcess([CADRE_BIN, 'ask', '--json', question], env)
        : // Node's compile cache, as cadre keeps it (the first, uncounted run fills it): the program is
          // TypeScript, and without it every run strips and compiles it and the AI SDK again.
          await measureProcess([SDK_ASK, question], {
            NODE_COMPILE_CACHE: join(tmpdir(), 'node-compile-cache'),
            ...env,
          });
  } finally {
    await server.close();
  }
  if (figures.code !== 0) throw new Error(`${command} ask failed (${figures.code}): ${figures.stderr}`);
  const requests = server.requests;
  const mains = requests.filter((request) => isMain(request.system));
  let firstCalculateMs = Number.NaN;
  if (command === 'cadre') {
    const tree = JSON.parse(figures.stdout) as {
      run: { children: Array<{ toolCalls: Array<{ ms: number }> }> };
    };
    firstCalculateMs = tree.run.children[0]?.toolCalls[0]?.ms ?? Number.NaN;
  }
  return {
    firstRequestMs: requests[0]!.receivedAt - figures.startedAt,
    wallMs: figures.wallMs,
    maxRssMb: figures.maxRssMb,
    windowMs: mains.length >= 2 ? mains.at(-1)!.receivedAt - mains[0]!.answeredAt! : Number.NaN,
    firstCalculateMs,
  };
}

/** The median of each figure. */
function mediansOf(samples: Sampled[]): Sampled {
  const of = (key: keyof Sampled) => median(samples.map((one) => one[key]));
  return {
    firstRequestMs: of('firstRequestMs'),
    wallMs: of('wallMs'),
    maxRssMb: of('maxRssMb'),
    windowMs: of('windowMs'),
    firstCalculateMs: of('firstCalculateMs'),
  };
}

/** Medians over `runs` runs, after one that is not counted (it fills Node's compile cache). */
async function medians(runs: number, take: () => Promise<Sampled>): Promise<Sampled> {
  await take();
  const samples: Sampled[] = [];
  for (let i = 0; i < runs; i++) samples.push(await take());
  return mediansOf(samples);
}

/** Cadre and the AI SDK program the same number of times, taking turns, so the machine's load hits both. */
async function paired(
  runs: number,
  script: FixtureScript,
  question: string,
  sdkEnv: Record<string, string> = {},
): Promise<[Sampled, Sampled]> {
  await sample('cadre', script, question);
  await sample('sdk', script, question, sdkEnv);
  const cadre: Sampled[] = [];
  const sdk: Sampled[] = [];
  for (let i = 0; i < runs; i++) {
    cadre.push(await sample('cadre', script, question));
    sdk.push(await sample('sdk', script, question, sdkEnv));
  }
  return [mediansOf(cadre), mediansOf(sdk)];
}

/** The first `calculate` in a fresh process: the tool module loaded, one call timed. */
async function firstCalculate(expression: string, runs: number): Promise<number> {
  const tool = new URL('../src/tools/compute/calculate.ts', import.meta.url).href;
  const code = [
    // As in `cadre`, whose bin keeps Node's compile cache.
    "(await import('node:module')).enableCompileCache();",
    `const { calculateTool } = await import(${JSON.stringify(tool)});`,
    'const started = performance.now();',
    `await calculateTool.execute({ expression: ${JSON.stringify(expression)} }, { signal: new AbortController().signal });`,
    'console.log(performance.now() - started);',
  ].join('\n');
  const samples: number[] = [];
  for (let i = -1; i < runs; i++) {
    const figures = await measureProcess(['--input-type=module', '-e', code]);
    if (i < 0) continue;
    if (figures.code !== 0) throw new Error(`calculate failed: ${figures.stderr}`);
    samples.push(Number(figures.stdout.trim()));
  }
  return median(samples);
}

/** Bytes a browser's first visit transfers: index.html, then every script and style it names. */
async function firstLoadBytes(encoding: string): Promise<{ bytes: number; files: number; headers: string }> {
  const { webAppRoutes } = await import('../src/server/routes/web-app.ts');
  const app = webAppRoutes();
  const get = (path: string) => app.request(path, { headers: { 'accept-encoding': encoding } });
  // The page is read plain to find its assets; what counts is what the asked encoding sends.
  const html = await (await app.request('/')).text();
  if (!html.includes('<script'))
    return { bytes: Number.NaN, files: 0, headers: 'not built: npm run build:web' };
  let bytes = (await (await get('/')).arrayBuffer()).byteLength;
  const assets = [...html.matchAll(/(?:src|href)="(\/[^"]+)"/g)].map((match) => match[1]!);
  let headers = '';
  for (const asset of assets) {
    const response = await get(asset);
    bytes += (await response.arrayBuffer()).byteLength;
    if (asset.startsWith('/assets/'))
      headers ||= `${response.headers.get('content-encoding') ?? 'identity'}, ${response.headers.get('cache-control') ?? 'no cache-control'}`;
  }
  return { bytes, files: assets.length + 1, headers };
}

/** Figures for `npm run bench`. */
export async function runPersonWaitingBench(
  runs = Number(process.env.BENCH_PROCESS_RUNS ?? 5),
): Promise<void> {
  const kb = (bytes: number) => `${(bytes / 1024).toFixed(0)} KB`;
  const ms = (value: number) => `${value.toFixed(0)} ms`;
  console.log(
    `what a person waits for (fresh processes, median of ${runs}, Cadre and the AI SDK program taking turns; goals from issue 24)`,
  );

  const versions: number[] = [];
  const bare: number[] = [];
  for (let i = -1; i < runs; i++) {
    const { wallMs } = await measureProcess([CADRE_BIN, '--version']);
    // Node itself starting and exiting: the floor under any command.
    const nothing = await measureProcess(['-e', '']);
    if (i < 0) continue;
    versions.push(wallMs);
    bare.push(nothing.wallMs);
  }
  console.log(
    `  cadre --version                       ${ms(median(versions))}   node -e '' ${ms(median(bare))}   (goal <= 150 ms)`,
  );

  const [hi, sdkHi] = await paired(runs, hello, 'Hi');
  console.log(
    `  cadre ask -> first model request      ${ms(hi.firstRequestMs)}   ai-sdk program ${ms(sdkHi.firstRequestMs)}   (goal <= 300 ms)`,
  );
  // The first run after an install or upgrade compiles every module: an empty compile cache each time.
  const coldHi = await medians(runs, async () => {
    const cache = mkdtempSync(join(tmpdir(), 'cadre-bench-cache-'));
    try {
      return await sample('cadre', hello, 'Hi', { NODE_COMPILE_CACHE: cache });
    } finally {
      rmSync(cache, { recursive: true, force: true });
    }
  });
  console.log(`    with an empty compile cache (first run after an install) ${ms(coldHi.firstRequestMs)}`);

  const [one, sdkOne] = await paired(runs, oneDelegation, 'What is 17 times 23, over 17?');
  console.log(
    `  one delegation (main -> math, 2 calculate), whole command ${ms(one.wallMs)}   ai-sdk program ${ms(sdkOne.wallMs)}   (goal <= 800 ms)`,
  );
  console.log(
    `  its peak RSS                          ${one.maxRssMb.toFixed(0)} MB   ai-sdk program ${sdkOne.maxRssMb.toFixed(0)} MB   (goal <= 180 MB)`,
  );
  console.log(`  its first calculate (in the run)      ${ms(one.firstCalculateMs)}`);

  const plain = await firstCalculate('17 * 23', runs);
  const mathjs = await firstCalculate('12 inch to cm', runs);
  console.log(
    `  first calculate in a process          plain arithmetic ${ms(plain)} (goal <= 50 ms)   mathjs cold ${ms(mathjs)} (goal <= 400 ms)`,
  );

  const ideal = 2 * STEP_MS;
  for (const [name, expression] of [
    ['plain arithmetic', (n: number) => `${n}^2`],
    ['mathjs units', (n: number) => `${n} inch to cm`],
  ] as const) {
    // The AI SDK program doing the same fan-out (its mathjs loaded before it starts) shows what the same
    // model steps cost a plain program on this machine beside the ideal of two model steps.
    const [fan, sdkFan] = await paired(runs, fanOut(expression), 'Work on 1 to 4.', {
      BENCH_SDK_MATHJS_AT_START: '1',
    });
    console.log(
      `  4 sub-agents x 1 calculate (${name}), 400 ms steps: ${ms(fan.windowMs)}   ai-sdk program ${ms(sdkFan.windowMs)}   ideal ${ms(ideal)}   ratio ${(fan.windowMs / ideal).toFixed(2)}x, ai-sdk ${(sdkFan.windowMs / ideal).toFixed(2)}x (goal <= 1.1x)`,
    );
  }

  const plainLoad = await firstLoadBytes('identity');
  const gzip = await firstLoadBytes('gzip, deflate');
  const brotli = await firstLoadBytes('gzip, deflate, br, zstd');
  console.log(
    `  web app first load ${plainLoad.files} files: ${kb(plainLoad.bytes)} uncompressed, ${kb(gzip.bytes)} asked gzip, ${kb(brotli.bytes)} asked br (goal <= 250 KB; assets: ${brotli.headers})`,
  );
}

if (import.meta.main) await runPersonWaitingBench();
