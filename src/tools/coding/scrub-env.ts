/**
 * The environment a model-written command gets: the caller's, minus Cadre's settings and every variable
 * that looks like a credential (provider keys, tokens, secrets, OTLP headers). A command the person
 * approved still has no business reading the keys Cadre itself runs on.
 */
export function scrubbedEnvironment(env: Record<string, string | undefined>): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || isSecretName(name)) continue;
    kept[name] = value;
  }
  return kept;
}

const SECRET_PREFIXES = [
  'CADRE_',
  'OPENAI_',
  'ANTHROPIC_',
  'GOOGLE_GENERATIVE_AI_',
  'GOOGLE_API',
  'GEMINI_',
  'OPENROUTER_',
  'AZURE_OPENAI',
  'MISTRAL_',
  'GROQ_',
  'DEEPSEEK_',
  'XAI_',
  'AWS_',
  'OTEL_EXPORTER_OTLP_HEADERS',
  'OTEL_EXPORTER_OTLP_TRACES_HEADERS',
  'NPM_TOKEN',
];
const SECRET_PATTERN = /(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?|APP_ID|AUTH)$/i;

/** True for names Cadre keeps away from commands it runs. */
export function isSecretName(name: string): boolean {
  const upper = name.toUpperCase();
  return SECRET_PREFIXES.some((prefix) => upper.startsWith(prefix)) || SECRET_PATTERN.test(upper);
}

/** What a shared server's user's command gets of the server's environment, whatever else it holds. */
const SANDBOX_BASE_NAMES = ['PATH', 'LANG', 'LANGUAGE', 'TERM', 'TZ'];

/**
 * The environment of a shared server's user's command: an allow-list, not a scrub. A name pattern cannot
 * know every credential (`DATABASE_URL`, `GITHUB_PAT`, `SENTRY_DSN`, `SLACK_WEBHOOK_URL` all pass one),
 * so only `PATH`, the locale (`LANG`, `LC_*`), `TERM`, `TZ` and the names the operator lists
 * (`multiUser.sandboxEnv`) pass; `HOME` is the user's own root.
 */
export function sandboxEnvironment(
  env: Record<string, string | undefined>,
  operatorNames: readonly string[],
  home: string,
): Record<string, string> {
  const allowed = new Set([...SANDBOX_BASE_NAMES, ...operatorNames]);
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && (allowed.has(name) || name.startsWith('LC_'))) kept[name] = value;
  }
  kept.HOME = home;
  return kept;
}
