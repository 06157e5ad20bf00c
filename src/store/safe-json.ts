/**
 * JSON for values that came from tools and models: never throws. Cycles, BigInts, functions and symbols
 * become short markers, and nesting past `maxDepth` is cut, so one odd tool output cannot stop a run's
 * events from being stored.
 */
export function safeJson(value: unknown, maxDepth = 64): string {
  try {
    return JSON.stringify(value);
  } catch {
    return JSON.stringify(sanitize(value, maxDepth, new WeakSet()));
  }
}

function sanitize(value: unknown, depth: number, seen: WeakSet<object>): unknown {
  if (typeof value === 'bigint') return `${value}n`;
  if (typeof value === 'function' || typeof value === 'symbol') return `[${typeof value}]`;
  if (value === null || typeof value !== 'object') return value;
  if (seen.has(value)) return '[cycle]';
  if (depth <= 0) return '[too deep]';
  seen.add(value);
  const result = Array.isArray(value)
    ? value.map((item) => sanitize(item, depth - 1, seen))
    : Object.fromEntries(Object.entries(value).map(([key, item]) => [key, sanitize(item, depth - 1, seen)]));
  seen.delete(value);
  return result;
}
