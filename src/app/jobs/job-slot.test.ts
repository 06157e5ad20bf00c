import { describe, expect, it } from 'vitest';
import { Semaphore } from '../../core/semaphore.ts';
import { JobSlot } from './job-slot.ts';

/** A job on a one-slot worker, holding its slot. */
async function oneSlotJob() {
  const slots = new Semaphore(1);
  const slot = new JobSlot(slots, await slots.acquire());
  return { slots, slot };
}

/** Lets every queued promise callback run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('JobSlot', () => {
  it('a resumed parent whose calls find their children ended one after another holds one slot, and goes on', async () => {
    const { slots, slot } = await oneSlotJob();
    const stop = new AbortController().signal;
    // Call 1 waits on a child that has ended already: its wait ends at once, and it asks for the slot back.
    slot.beginWait();
    expect(slots.available).toBe(1);
    const first = slot.endWait(stop);
    // Before that request is granted, call 2 begins and ends its own wait the same way.
    slot.beginWait();
    const second = slot.endWait(stop);
    // The worker's loop takes new work only when no one waits for a slot.
    let done = 0;
    void first.then(() => done++);
    void second.then(() => done++);
    await settle();
    expect(done).toBe(2);
    expect(slot.held).toBe(true);
    expect([slots.available, slots.waiting]).toEqual([0, 0]);
    slot.end();
    expect(slots.available).toBe(1);
  });

  it('gives its slot back while any call waits, and takes it again once the last wait ends', async () => {
    const { slots, slot } = await oneSlotJob();
    const stop = new AbortController().signal;
    slot.beginWait();
    slot.beginWait();
    expect([slot.held, slots.available]).toEqual([false, 1]);
    await slot.endWait(stop);
    expect([slot.held, slots.available]).toEqual([false, 1]);
    await slot.endWait(stop);
    expect([slot.held, slots.available]).toEqual([true, 0]);
  });

  it("taking the slot again gives way to the run's stop (its time limit), so the job can end", async () => {
    const { slots, slot } = await oneSlotJob();
    slot.beginWait();
    // Another job took the free slot meanwhile and keeps it.
    const other = await slots.acquire();
    const stop = new AbortController();
    const taking = slot.endWait(stop.signal);
    stop.abort(new Error('out of time'));
    // The run unwinds holding no slot: it records how its calls ended (a child's cancelled envelope) and ends.
    await expect(taking).resolves.toBeUndefined();
    expect([slot.held, slots.waiting]).toEqual([false, 0]);
    slot.end();
    other();
    expect(slots.available).toBe(1);
  });

  it('a slot granted after the job is over goes straight back', async () => {
    const { slots, slot } = await oneSlotJob();
    slot.beginWait();
    const other = await slots.acquire();
    const taking = slot.endWait(new AbortController().signal);
    slot.end();
    other();
    await taking;
    expect([slot.held, slots.available]).toEqual([false, 1]);
  });
});
