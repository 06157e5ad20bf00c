import { UserError } from './errors.ts';

/**
 * The error for an agent name nobody defined: it lists the known agents and, when one is a likely typo
 * away (`reserch` for `research`), names it.
 */
export function unknownAgentError(name: string, known: Iterable<string>): UserError {
  const names = [...known];
  const close = closestName(name, names);
  return new UserError(
    'unknown_agent',
    `There is no agent named "${name}".${close ? ` Did you mean "${close}"?` : ''} Known agents: ${names.join(', ')}.`,
    { name },
  );
}

/** The known name within a few edits of `name` (at most a third of its length, and 2), if exactly one is closest. */
export function closestName(name: string, names: readonly string[]): string | undefined {
  const wanted = name.toLowerCase();
  const limit = Math.min(2, Math.floor(wanted.length / 3));
  let best: string | undefined;
  let bestDistance = limit + 1;
  let tie = false;
  for (const candidate of names) {
    const distance = editDistance(wanted, candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
      tie = false;
    } else if (distance === bestDistance) tie = true;
  }
  return tie ? undefined : best;
}

/** Edits (insert, delete, substitute, swap two neighbours) from `a` to `b`. */
function editDistance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) => [i, ...new Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) rows[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let value = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        value = Math.min(value, rows[i - 2]![j - 2]! + 1);
      rows[i]![j] = value;
    }
  }
  return rows[a.length]![b.length]!;
}
