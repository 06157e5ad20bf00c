/**
 * JSON of a tool's output, made once for its journal entry, its event and the model's view of it. All
 * three carry the same object (the runtime's `traceToolCall` emits what `journaledCall` just put, and
 * `boundedModelOutput` measures it right after) and the store spools the first two before the next model
 * request; a 20 KB output costs 10 µs and a 20 KB string each time it is serialised. A serialisation
 * is reused only for the call that returned the object (see outputReturned) and within the turn of the
 * event loop that made it, so an object a tool changes and returns again is serialised again.
 */
const made = new WeakMap<object, { json: string; turn: number }>();
let turn = 0;
let turnEnding = false;

function currentTurn(): number {
  if (!turnEnding) {
    turnEnding = true;
    setImmediate(() => {
      turn++;
      turnEnding = false;
    });
  }
  return turn;
}

/** JSON.stringify of an object output, reused within this turn; throws as JSON.stringify does. */
export function outputJson(output: object): string {
  const now = currentTurn();
  const known = made.get(output);
  if (known && known.turn === now) return known.json;
  const json = JSON.stringify(output);
  made.set(output, { json, turn: now });
  return json;
}

/**
 * A tool has just returned `output`: JSON made of the same object before (a call earlier in this turn that
 * returned it, since changed by the tool) is not its JSON any more.
 */
export function outputReturned<T>(output: T): T {
  if (typeof output === 'object' && output !== null) made.delete(output);
  return output;
}
