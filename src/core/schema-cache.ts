import { asSchema, type Schema } from 'ai';
import type { z } from 'zod';

const schemas = new WeakMap<z.ZodType, Schema>();

/**
 * The AI SDK schema for a zod schema, converted once. Tools are bound afresh for every run, and converting
 * zod to JSON Schema each time was the largest share of Cadre's per-run overhead.
 */
export function sdkSchema(schema: z.ZodType): Schema {
  let converted = schemas.get(schema);
  if (!converted) {
    converted = asSchema(schema);
    schemas.set(schema, converted);
  }
  return converted;
}
