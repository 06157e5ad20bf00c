import { describe, expect, it } from 'vitest';
import { chainMappers, mapStream } from './map-stream.ts';

function source(parts: number[], options: { failAt?: number; onCancel?: (reason: unknown) => void } = {}) {
  let index = 0;
  return new ReadableStream<number>({
    pull(controller) {
      if (index === options.failAt) controller.error(new Error('source broke'));
      else if (index < parts.length) controller.enqueue(parts[index++]!);
      else controller.close();
    },
    cancel: options.onCancel,
  });
}

async function read<T>(stream: ReadableStream<T>): Promise<T[]> {
  const out: T[] = [];
  const reader = stream.getReader();
  for (let next = await reader.read(); !next.done; next = await reader.read()) out.push(next.value);
  return out;
}

describe('mapStream', () => {
  it('maps, drops and adds parts in order, waiting on an asynchronous transform', async () => {
    const mapped = mapStream(source([1, 2, 3, 4]), {
      async transform(part, enqueue) {
        if (part === 2) return; // dropped
        if (part === 3) await new Promise((resolve) => setTimeout(resolve, 5));
        enqueue(part * 10);
      },
      flush: (enqueue) => enqueue(99),
    });
    expect(await read(mapped)).toEqual([10, 30, 40, 99]);
  });

  it('passes a source error on', async () => {
    const mapped = mapStream(source([1, 2], { failAt: 1 }), { transform: (part, enqueue) => enqueue(part) });
    await expect(read(mapped)).rejects.toThrow('source broke');
  });

  it('a throwing transform errors the stream and cancels the source', async () => {
    let cancelled: unknown;
    const mapped = mapStream(source([1, 2, 3], { onCancel: (reason) => (cancelled = reason) }), {
      transform(part) {
        if (part === 2) throw new Error('bad part');
      },
    });
    await expect(read(mapped)).rejects.toThrow('bad part');
    expect((cancelled as Error).message).toBe('bad part');
  });

  it('fails from outside (a timer), stopping the source', async () => {
    let cancelled = false;
    const never = new ReadableStream<number>({
      pull: () => new Promise(() => {}),
      cancel: () => {
        cancelled = true;
      },
    });
    const mapped = mapStream(never, {
      start: (fail) => setTimeout(() => fail(new Error('too slow')), 5),
      transform: (part, enqueue) => enqueue(part),
    });
    await expect(read(mapped)).rejects.toThrow('too slow');
    expect(cancelled).toBe(true);
  });

  it('cancelling it cancels the source', async () => {
    let reason: unknown;
    const mapped = mapStream(source([1, 2, 3], { onCancel: (why) => (reason = why) }), {
      transform: (part, enqueue) => enqueue(part),
    });
    const reader = mapped.getReader();
    expect((await reader.read()).value).toBe(1);
    await reader.cancel('enough');
    expect(reason).toBe('enough');
  });
});

describe('mapStream end', () => {
  it('is told once when the stream is over, however it ended', async () => {
    const ends: string[] = [];
    const done = mapStream(source([1]), {
      transform: (part, enqueue) => enqueue(part),
      end: () => ends.push('closed'),
    });
    await read(done);
    const broken = mapStream(source([1], { failAt: 0 }), {
      transform: () => {},
      end: () => ends.push('failed'),
    });
    await read(broken).catch(() => {});
    const cancelled = mapStream(source([1, 2]), {
      transform: (part, enqueue) => enqueue(part),
      end: () => ends.push('cancelled'),
    });
    await cancelled.cancel('stop');
    expect(ends).toEqual(['closed', 'failed', 'cancelled']);
  });
});

describe('chainMappers', () => {
  it('passes parts through each mapper in order, one waiting mapper holding back what follows it', async () => {
    const log: string[] = [];
    const doubled = { transform: (part: number, enqueue: (part: number) => void) => enqueue(part * 2) };
    const holdsTwo = {
      async transform(part: number, enqueue: (part: number) => void) {
        if (part === 4) await new Promise((resolve) => setTimeout(resolve, 5));
        enqueue(part);
      },
      flush: (enqueue: (part: number) => void) => enqueue(100),
    };
    const logged = {
      transform(part: number, enqueue: (part: number) => void) {
        log.push(`saw ${part}`);
        enqueue(part + 1);
      },
      end: () => log.push('end'),
    };
    const mapped = mapStream(source([1, 2, 3]), chainMappers([doubled, holdsTwo, logged]));
    expect(await read(mapped)).toEqual([3, 5, 7, 101]);
    expect(log).toEqual(['saw 2', 'saw 4', 'saw 6', 'saw 100', 'end']);
  });
});
