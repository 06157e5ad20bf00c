export { DEFAULT_SANDBOX_LIMITS, type SandboxLimits } from './protocol.ts';
export { createRunJsTool, type RunJsOptions } from './run-js.ts';
export {
  quickJsModule,
  runSandboxed,
  type SandboxRequest,
  type SandboxResult,
  sandboxWarm,
} from './sandbox.ts';
