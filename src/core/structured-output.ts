import { z } from 'zod';

/**
 * Finds the JSON object in an agent's final answer (bare, or in a fenced block) and validates it against
 * the agent's declared JSON Schema.
 */
export function validateStructuredOutput(
  answer: string,
  schema: Record<string, unknown>,
): { ok: true; data: unknown } | { ok: false; error: string } {
  const candidate = extractJson(answer);
  if (candidate === undefined) return { ok: false, error: 'no JSON object found in the answer' };
  let validator: z.ZodType;
  try {
    validator = z.fromJSONSchema(schema as never);
  } catch (error) {
    return { ok: false, error: `the agent's output schema is not usable: ${(error as Error).message}` };
  }
  const parsed = validator.safeParse(candidate);
  if (parsed.success) return { ok: true, data: parsed.data };
  const issues = parsed.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`);
  return { ok: false, error: issues.join('; ') };
}

function extractJson(text: string): unknown {
  const fenced = text.match(/```(?:json)?\s*\n([\s\S]*?)\n```/);
  const attempts = [fenced?.[1], text, text.slice(text.indexOf('{'), text.lastIndexOf('}') + 1)];
  for (const attempt of attempts) {
    if (!attempt?.trim()) continue;
    try {
      return JSON.parse(attempt);
    } catch {
      // try the next candidate
    }
  }
  return undefined;
}
