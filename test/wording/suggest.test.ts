import { describe, expect, it } from 'vitest';
import { didYouMean, nearestWord } from '../../src/wording/suggest.js';

describe('nearestWord', () => {
  const commands = ['start', 'stop', 'ask', 'doctor', 'approve', 'grant', 'runs', 'cancel', 'worktrees', 'service'];
  it('finds transpositions, a missing letter and a missing dash', () => {
    expect(nearestWord('strat', commands)).toBe('start');
    expect(nearestWord('doctr', commands)).toBe('doctor');
    expect(nearestWord('-json', ['--json'])).toBe('--json');
    expect(nearestWord('--vendr', ['--vendor', '--cwd'])).toBe('--vendor');
  });
  it('guesses nothing for a word that is not a near miss', () => {
    expect(nearestWord('--bogus', ['--json'])).toBeUndefined();
    expect(nearestWord('xylophone', commands)).toBeUndefined();
    expect(nearestWord('ak', ['ask'])).toBe('ask');
    expect(nearestWord('go', ['ask'])).toBeUndefined();
  });
  it('says nothing for an exact word', () => {
    expect(didYouMean('start', commands)).toBe('');
    expect(didYouMean('strat', commands)).toBe(' Did you mean "start"?');
  });
});
