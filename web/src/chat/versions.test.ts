import { describe, expect, it } from 'vitest';
import type { CadreMessage } from '../runs/protocol.ts';
import { replacedVersion, shownMessages } from './versions.ts';

const message = (id: string, role: 'user' | 'assistant'): CadreMessage => ({
  id,
  role,
  parts: [{ type: 'text', text: id }],
});
const q1 = message('q1', 'user');
const a1 = message('a1', 'assistant');
const q2 = message('q2', 'user');
const a2 = message('a2', 'assistant');
const a2b = message('a2b', 'assistant');
const a2c = message('a2c', 'assistant');
const q1e = message('q1', 'user');
const a1e = message('a1e', 'assistant');

const ids = (shown: ReturnType<typeof shownMessages>) =>
  shown.map(({ message: { id }, current, versions }) => [
    id,
    current,
    versions ? `${versions.at + 1}/${versions.count}` : '',
  ]);

describe('shownMessages', () => {
  // q1 a1 q2 a2 → regenerated (a2b) → regenerated (a2c) → q1 edited (a1e).
  const versions = [
    { id: 'v1', afterId: 'a1', messages: [q2, a2] },
    { id: 'v2', afterId: 'a1', messages: [q2, a2b] },
    { id: 'v3', afterId: null, messages: [q1, a1, q2, a2c] },
  ];
  const current = [q1e, a1e];

  it('shows the current branch, with the switch on the answer after a question that has versions', () => {
    expect(ids(shownMessages(current, versions, {}))).toEqual([
      ['q1', true, ''],
      ['a1e', true, '2/2'],
    ]);
  });

  it('shows an earlier version from the question it replaced, and the versions within it', () => {
    expect(ids(shownMessages(current, versions, { '': 0 }))).toEqual([
      ['q1', false, ''],
      ['a1', false, '1/2'],
      ['q2', false, ''],
      ['a2c', false, '3/3'],
    ]);
    expect(ids(shownMessages(current, versions, { '': 0, a1: 0 })).slice(2)).toEqual([
      ['q2', false, ''],
      ['a2', false, '1/3'],
    ]);
    // A choice past the count holds the latest.
    expect(ids(shownMessages(current, versions, { '': 7 }))[1]).toEqual(['a1e', true, '2/2']);
  });

  it('keeps as a version only what had an answer', () => {
    expect(replacedVersion([q1, a1, q2, a2], 2)).toMatchObject({ afterId: 'a1', messages: [q2, a2] });
    expect(replacedVersion([q1, a1, q2], 2)).toBeUndefined();
    expect(replacedVersion([q1, a1], 0)).toMatchObject({ afterId: null, messages: [q1, a1] });
  });
});
