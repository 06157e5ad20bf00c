/**
 * A call's input as a person reads it: one field per line, text exactly as it will be used (a command
 * whole, with its quotes and newlines, never JSON-escaped or cut), other values as indented JSON.
 */
import { formatValue } from '../format.ts';
import { plainNumber } from './call-words.ts';

function fieldText(value: unknown): string {
  if (typeof value === 'number') return plainNumber(value);
  return formatValue(value);
}

export function InputFields({ input, label }: { input: unknown; label: string }) {
  if (input === null || typeof input !== 'object' || Array.isArray(input))
    return <pre className="input-field-value">{fieldText(input)}</pre>;
  const entries = Object.entries(input as Record<string, unknown>).filter(([, value]) => value !== undefined);
  return (
    <dl className="input-fields" aria-label={label}>
      {entries.map(([name, value]) => (
        <div key={name} className="input-field">
          <dt>{name}</dt>
          <dd>
            <pre className="input-field-value">{fieldText(value)}</pre>
          </dd>
        </div>
      ))}
    </dl>
  );
}
