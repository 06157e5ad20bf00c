/**
 * Context-efficiency benchmark (seed 004's point): on the fixture repository, with scripted models, the
 * main agent's prompt tokens when it reads the files itself versus when it delegates to `explorer`, which
 * reads the same files in its own context and hands back a short structured result. Also times run_js:
 * start-up (a fresh worker and QuickJS instance per call) and one tool call from inside the sandbox.
 *
 * Run alone: `npx node bench/context-efficiency.ts`.
 */
import { fileURLToPath } from 'node:url';
import { loadAgentFile } from '../src/agents/loader.ts';
import type { AgentDefinition } from '../src/core/agent-definition.ts';
import { Runtime } from '../src/core/runtime.ts';
import { ToolRegistry } from '../src/core/tool-registry.ts';
import { ScriptedModel, type ScriptedReply, type ScriptedRequest } from '../src/models/scripted-model.ts';
import { runSandboxed, sandboxWarm } from '../src/tools/sandbox/sandbox.ts';
import { workspaceTools } from '../src/tools/workspace/index.ts';

const fixtureRepo = fileURLToPath(new URL('../test/fixtures/repo', import.meta.url));
const cadreRepo = fileURLToPath(new URL('..', import.meta.url));
const agentFile = (name: string) => fileURLToPath(new URL(`../src/agents/${name}.md`, import.meta.url));

interface Question {
  question: string;
  keyword: string;
  files: string[];
  findings: { summary: string; relevantFiles: string[]; keyFindings: string[]; codeSnippets: unknown[] };
}

/** A repository and questions about it; `files` are what an agent reads to answer. */
interface Corpus {
  name: string;
  root: string;
  questions: Question[];
}

const FIXTURE_QUESTIONS: Question[] = [
  {
    question: 'How are session tokens signed and verified, and what happens when one is about to expire?',
    keyword: 'verifySession|issueSession|refreshSession',
    files: ['src/auth/session.ts', 'src/auth/middleware.ts', 'src/config.ts'],
    findings: {
      summary:
        'Tokens are base64url(JSON payload {sub, iat, exp, nonce}) + "." + base64url(HMAC-SHA256 of the encoded payload ' +
        'with SESSION_SECRET). verifySession recomputes the HMAC, compares in constant time, then checks exp. ' +
        'requireUser refreshes a token within 300 s of expiry and returns it in the x-session header.',
      relevantFiles: ['src/auth/session.ts', 'src/auth/middleware.ts', 'src/config.ts'],
      keyFindings: [
        'sign() = createHmac("sha256", secret).update(encodedPayload) (src/auth/session.ts:31)',
        'timingSafeEqual on equal-length buffers; errors: malformed, bad-signature, expired (src/auth/session.ts:46)',
        'refreshSession issues a new token when remaining <= 300 s (src/auth/session.ts:66)',
        'token from "Authorization: Bearer" or the "session" cookie (src/auth/middleware.ts:8)',
        'SESSION_SECRET must be >= 32 chars in production; default TTL 3600 s (src/config.ts:46)',
      ],
      codeSnippets: [
        {
          path: 'src/auth/session.ts',
          line: 49,
          code: 'if (actual.length !== expected.length || !timingSafeEqual(actual, expected))',
        },
      ],
    },
  },
  {
    question: "How is an order's total computed, including discounts and tax?",
    keyword: 'discountCents|taxRate|subtotalCents',
    files: ['src/orders/order-service.ts', 'src/orders/pricing.ts', 'src/config.ts'],
    findings: {
      summary:
        'total = (subtotal - discount) + round((subtotal - discount) * taxRate). The discount is the best single ' +
        'percentage (bulk by quantity or loyalty by past orders, not stacked, rounded down) plus fixed coupons, capped ' +
        'at the subtotal. Amounts are integer cents; taxRate defaults to 0.2.',
      relevantFiles: ['src/orders/order-service.ts', 'src/orders/pricing.ts', 'src/config.ts'],
      keyFindings: [
        'create() computes subtotal, discount, tax = Math.round(taxable * taxRate) (src/orders/order-service.ts:41)',
        'bestPercent takes the max of bulk (10 -> 5 %, 50 -> 12 %) and loyalty (5 past orders -> 7 %) (src/orders/pricing.ts:33)',
        'coupon WELCOME10 takes 1000 cents off; discount never exceeds subtotal (src/orders/pricing.ts:44)',
      ],
      codeSnippets: [
        {
          path: 'src/orders/order-service.ts',
          line: 45,
          code: 'const tax = Math.round(taxable * this.#config.taxRate);',
        },
      ],
    },
  },
  {
    question: 'Which routes require authentication, and which require an admin?',
    keyword: 'requireUser|requireAdmin',
    files: ['src/http/router.ts', 'src/auth/middleware.ts'],
    findings: {
      summary:
        'Public: GET /health, POST /sessions. Signed-in (requireUser): GET/POST /orders, GET /orders/:id (own orders ' +
        'only, else 404). Admin (requireAdmin, user id in ADMINS): GET /admin/orders, POST /admin/orders/:id/refund.',
      relevantFiles: ['src/http/router.ts', 'src/auth/middleware.ts', 'src/index.ts'],
      keyFindings: [
        'routes are wrapped per handler in requireUser/requireAdmin (src/http/router.ts:31)',
        'missing/invalid token -> 401, non-admin -> 403 (src/auth/middleware.ts:27, :46)',
        'admins come from the ADMINS env var, comma-separated (src/index.ts:9)',
      ],
      codeSnippets: [],
    },
  },
];

/** Cadre's own source: real file sizes (a few KB to 17 KB), the kind of code an explorer is for. */
const CADRE_QUESTIONS: Question[] = [
  {
    question: 'How does run_js keep model-written code from escaping or exhausting the host?',
    keyword: 'setMemoryLimit|setMaxStackSize|terminate|setInterruptHandler',
    files: ['src/tools/sandbox/worker.ts', 'src/tools/sandbox/sandbox.ts', 'src/tools/sandbox/protocol.ts'],
    findings: {
      summary:
        'Each call runs in a fresh worker thread with an empty env and a fresh QuickJS (WASM) instance: a capped ' +
        'WebAssembly.Memory plus QuickJS memory limit, a 256 KiB stack, an interrupt handler at the deadline, and a ' +
        'host watchdog that terminates the worker 1 s later. Only JSON strings cross; tools are async stubs.',
      relevantFiles: [
        'src/tools/sandbox/worker.ts',
        'src/tools/sandbox/sandbox.ts',
        'src/tools/sandbox/protocol.ts',
      ],
      keyFindings: [
        'WebAssembly.Memory maximum = memoryBytes + 16 MB, since QuickJS cannot size blocks in this build (worker.ts)',
        'setInterruptHandler(() => Date.now() > deadline) (worker.ts)',
        'watchdog setTimeout(timeMs + 1000) -> worker.terminate() (sandbox.ts)',
        'console capped at 8000 chars, result at 1e6 chars, 100 tool calls, 16/256 timers (protocol.ts)',
      ],
      codeSnippets: [
        {
          path: 'src/tools/sandbox/sandbox.ts',
          line: 80,
          code: 'const watchdog = setTimeout(() => kill(...), limits.timeMs + WATCHDOG_GRACE_MS);',
        },
      ],
    },
  },
  {
    question: 'What happens when an agent runs out of turns?',
    keyword: 'max_turns|maxTurns|FINAL_ANSWER_PROMPT',
    files: ['src/core/run-agent.ts', 'src/core/limits.ts'],
    findings: {
      summary:
        'A stopWhen predicate stops the tool loop at maxTurns steps (default 8). If the last step still asked for ' +
        'tools, the run makes one more model call with no tools and FINAL_ANSWER_PROMPT, and ends with status ' +
        '"max_turns" and that answer.',
      relevantFiles: ['src/core/run-agent.ts', 'src/core/limits.ts'],
      keyFindings: [
        'isStepCount(limits.maxTurns) sets stopReason = "max_turns" (src/core/run-agent.ts, step 5)',
        'step 6: activeTools: [], toolChoice: "none", FINAL_ANSWER_PROMPT appended as a user message',
        'DEFAULT_LIMITS.maxTurns = 8; an agent definition may override it (src/core/limits.ts)',
      ],
      codeSnippets: [],
    },
  },
  {
    question: 'How do the workspace tools stop paths from leaving the workspace root?',
    keyword: 'realpath|contains\\(|OutsideWorkspaceError',
    files: ['src/tools/workspace/confine.ts', 'src/tools/workspace/walk.ts'],
    findings: {
      summary:
        'Workspace.resolve refuses absolute and ~ paths, resolves the rest against the real root, checks it with ' +
        'path.relative (no "..", not absolute), then realpaths it and checks again, which catches symlinks and ' +
        'symlinked parents. The walker skips links whose target is outside and never descends linked folders.',
      relevantFiles: ['src/tools/workspace/confine.ts', 'src/tools/workspace/walk.ts'],
      keyFindings: [
        'contains(): relative === "" or not starting with "../" and not absolute (confine.ts)',
        'resolve(): lexical check, then realpath + contains() again (confine.ts)',
        'walkFiles: symlinks followed only to files inside the root; .gitignore per folder (walk.ts)',
      ],
      codeSnippets: [],
    },
  },
];

const CORPORA: Corpus[] = [
  {
    name: 'fixture repository (test/fixtures/repo, files of 1-4 KB)',
    root: fixtureRepo,
    questions: FIXTURE_QUESTIONS,
  },
  { name: "Cadre's own source (files of 2-17 KB)", root: cadreRepo, questions: CADRE_QUESTIONS },
];

export interface CorpusResult {
  name: string;
  questions: Array<{
    question: string;
    selfTokens: number;
    delegatedTokens: number;
    explorerTokens: number;
    ratio: number;
  }>;
  selfTokens: number;
  delegatedTokens: number;
  ratio: number;
}

export interface ContextEfficiencyResult {
  corpora: CorpusResult[];
  runJs: { coldStartupMs: number; startupMs: number; toolCallMs: number; samples: number };
}

/** The main agent's own prompt tokens for one question, reading itself or delegating to explorer. */
async function measure(root: string, question: Question, mode: 'self' | 'delegate') {
  const mainFile = loadAgentFile(agentFile('main'), 'builtin').definition;
  const explorer = loadAgentFile(agentFile('explorer'), 'builtin').definition;
  const main: AgentDefinition = {
    ...mainFile,
    tools: mode === 'self' ? ['glob', 'grep', 'read_file', 'list_dir'] : ['explorer'],
    maxTurns: 12,
  };
  // The same exploration either way, as a model would do it: look around, grep, read the main files,
  // then the ones they lead to.
  const half = Math.ceil(question.files.length / 2);
  const reads = (paths: string[]) => ({
    toolCalls: paths.map((path) => ({ name: 'read_file', input: { path } })),
  });
  const exploration: ScriptedReply[] = [
    {
      toolCalls: [
        { name: 'list_dir', input: { path: '.' } },
        { name: 'glob', input: { pattern: 'src/**/*.ts' } },
      ],
    },
    {
      toolCalls: [
        { name: 'grep', input: { pattern: question.keyword, glob: 'src/**/*.ts', max_results: 30 } },
      ],
    },
    reads(question.files.slice(0, half)),
    reads(question.files.slice(half)),
  ];
  const answer = `Answer: ${question.findings.summary}`;
  const script = (request: ScriptedRequest): ScriptedReply => {
    const isExplorer = request.system.includes("Cadre's codebase explorer");
    const toolTurns = request.prompt.filter((message) => message.role === 'tool').length;
    if (isExplorer) return exploration[toolTurns] ?? { text: JSON.stringify(question.findings) };
    if (mode === 'self') return exploration[toolTurns] ?? { text: answer };
    return toolTurns === 0
      ? { toolCalls: [{ name: 'explorer', input: { task: question.question } }] }
      : { text: answer };
  };
  const model = new ScriptedModel(script);
  const runtime = new Runtime({
    agents: new Map([
      ['main', main],
      ['explorer', explorer],
    ]),
    tools: new ToolRegistry(workspaceTools(root)),
    resolveModel: () => model,
    mainModel: 'scripted:bench',
  });
  const { envelope, tree } = await runtime.run({ agent: 'main', task: question.question });
  if (envelope.status !== 'ok') throw new Error(`${mode} run ended ${envelope.status}: ${envelope.summary}`);
  const explorerTokens = tree.children.reduce((sum, child) => sum + child.subtreeUsage.inputTokens, 0);
  return { mainTokens: tree.usage.inputTokens, explorerTokens };
}

async function timeRunJs(samples: number) {
  const callTool = async (_name: string, input: unknown) => ({ ok: true, input });
  const run = async (code: string, toolNames: string[] = [], limits = {}) => {
    const started = performance.now();
    const result = await runSandboxed({ code, toolNames, callTool, limits });
    if (!result.ok) throw new Error(result.error);
    return { ms: performance.now() - started, value: result.value };
  };
  // The first call in a process boots its worker cold; later ones find a warm one waiting.
  const coldStartupMs = (await run('return 1')).ms;
  // Between two run_js calls a model turn passes; by then the spare worker has booted. Wait for that here.
  const startups: number[] = [];
  for (let index = 0; index < samples; index++) {
    await sandboxWarm();
    startups.push((await run('return 1')).ms);
  }
  const calls = 1000;
  const perCall: number[] = [];
  for (let index = 0; index < 5; index++) {
    const { value } = await run(
      `const started = Date.now(); for (let i = 0; i < ${calls}; i++) await echo({ i }); return (Date.now() - started) / ${calls};`,
      ['echo'],
      { maxToolCalls: calls },
    );
    perCall.push(value as number);
  }
  return { coldStartupMs, startupMs: median(startups), toolCallMs: median(perCall), samples };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

/** Runs every question both ways and times run_js. */
export async function benchContextEfficiency(samples = 20): Promise<ContextEfficiencyResult> {
  const corpora: CorpusResult[] = [];
  for (const corpus of CORPORA) {
    const questions = [];
    for (const question of corpus.questions) {
      const self = await measure(corpus.root, question, 'self');
      const delegated = await measure(corpus.root, question, 'delegate');
      questions.push({
        question: question.question,
        selfTokens: self.mainTokens,
        delegatedTokens: delegated.mainTokens,
        explorerTokens: delegated.explorerTokens,
        ratio: delegated.mainTokens / self.mainTokens,
      });
    }
    const selfTokens = questions.reduce((sum, item) => sum + item.selfTokens, 0);
    const delegatedTokens = questions.reduce((sum, item) => sum + item.delegatedTokens, 0);
    corpora.push({
      name: corpus.name,
      questions,
      selfTokens,
      delegatedTokens,
      ratio: delegatedTokens / selfTokens,
    });
  }
  return { corpora, runJs: await timeRunJs(samples) };
}

export function printContextEfficiency(result: ContextEfficiencyResult): void {
  console.log('Context efficiency: main agent prompt tokens, reading files itself vs delegating to explorer');
  for (const corpus of result.corpora) {
    console.log(`  ${corpus.name}`);
    for (const item of corpus.questions) {
      console.log(
        `    ${item.question.slice(0, 58).padEnd(58)}  self ${String(item.selfTokens).padStart(6)}  ` +
          `delegated ${String(item.delegatedTokens).padStart(5)}  (explorer's own ${String(item.explorerTokens).padStart(6)})  ` +
          `${(item.ratio * 100).toFixed(1).padStart(5)} %`,
      );
    }
    console.log(
      `    overall: ${corpus.delegatedTokens} / ${corpus.selfTokens} = ${(corpus.ratio * 100).toFixed(1)} % (goal <= 10 %)`,
    );
  }
  console.log(
    `run_js: start-up ${result.runJs.startupMs.toFixed(1)} ms (median of ${result.runJs.samples}, warm worker; ` +
      `cold first call ${result.runJs.coldStartupMs.toFixed(1)} ms), ` +
      `tool call from inside the sandbox ${result.runJs.toolCallMs.toFixed(3)} ms (host echo tool, round trip)`,
  );
}

/** What bench/run.ts calls. */
export async function runContextEfficiencyBench(): Promise<void> {
  printContextEfficiency(await benchContextEfficiency());
}

if (import.meta.main) await runContextEfficiencyBench();
