import { z } from 'zod';
import { UserError } from '../../core/errors.ts';
import type { LspManagerOptions } from './manager.ts';
import { configuredServer, typescriptServer } from './server-config.ts';

/**
 * `settings.lsp` in Cadre's config: extra language servers (checked before the built-in TypeScript one,
 * so they may also replace it) and how long an idle server is kept.
 *
 *   "lsp": { "idleSeconds": 300, "servers": [{ "name": "python", "command": ["pyright-langserver", "--stdio"],
 *            "extensions": [".py"] }] }
 */
export const lspSettingsSchema = z.strictObject({
  idleSeconds: z.number().positive().optional(),
  servers: z
    .array(
      z.strictObject({
        name: z.string().min(1),
        command: z.array(z.string().min(1)).min(1),
        extensions: z.array(z.string().regex(/^\.[\w.-]+$/, 'an extension with its dot, e.g. ".py"')).min(1),
        languageId: z.string().min(1).optional(),
      }),
    )
    .default([]),
});

/** The LSP manager options from `settings.lsp`; an invalid value is an error naming the field. */
export function lspOptionsFromSettings(settings: Record<string, unknown> | undefined): LspManagerOptions {
  const parsed = lspSettingsSchema.safeParse(settings?.lsp ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new UserError(
      'config_invalid',
      `settings.lsp.${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid'}`,
    );
  }
  return {
    servers: [...parsed.data.servers.map((server) => configuredServer(server)), typescriptServer()],
    ...(parsed.data.idleSeconds ? { idleMs: parsed.data.idleSeconds * 1000 } : {}),
  };
}
