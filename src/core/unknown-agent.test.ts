import { describe, expect, it } from 'vitest';
import { unknownAgentError } from './unknown-agent.ts';

const known = ['main', 'research', 'documents', 'explorer', 'planner', 'math', 'coder'];

describe('an agent name nobody defined', () => {
  it('names the known agent a typo away, and lists them all', () => {
    for (const typo of ['reserch', 'resaerch', 'Research', 'explroer', 'documnets', 'planer']) {
      const error = unknownAgentError(typo, known);
      expect(error).toMatchObject({ fault: 'user', code: 'unknown_agent' });
      expect(error.message).toMatch(/Did you mean "(research|explorer|documents|planner)"\?/);
      expect(error.message).toContain(`Known agents: ${known.join(', ')}.`);
    }
  });

  it('guesses nothing for a name far from every agent, a short one, or one as close to two', () => {
    for (const name of ['weather', 'xy', 'ma']) {
      expect(unknownAgentError(name, known).message).not.toContain('Did you mean');
    }
    expect(unknownAgentError('mat', known).message).toContain('Did you mean "math"?');
    // One edit from both: no guess.
    expect(unknownAgentError('cat', ['bat', 'hat']).message).not.toContain('Did you mean');
  });
});
