import type { z } from 'zod';

/** "field.path: what was expected" for each issue, joined. */
export function formatIssues(issues: z.core.$ZodIssue[]): string {
  return issues
    .map((issue) => {
      const field = issue.path.length ? issue.path.join('.') : '(top level)';
      const keys = issue.code === 'unrecognized_keys' ? ` (${issue.keys.join(', ')})` : '';
      return `${field}: ${issue.message}${keys}`;
    })
    .join('; ');
}
