import picomatch from 'picomatch';
import { ModelBehaviorError } from '../../core/errors.ts';

/** A matcher for workspace-relative paths; a pattern without "/" matches file names anywhere. */
export function compileGlob(pattern: string): (relative: string) => boolean {
  const cleaned = pattern.trim().replace(/^\.\//, '');
  if (cleaned.startsWith('/') || cleaned.split('/').includes('..')) {
    throw new ModelBehaviorError(
      'tool_input',
      `"${pattern}" reaches outside the workspace; use a pattern relative to its root`,
    );
  }
  return picomatch(cleaned, { dot: true, basename: !cleaned.includes('/') });
}
