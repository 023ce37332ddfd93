import { describe, expect, it } from 'vitest';
import { oneAtATime } from './pipeline-gate';

const tick = () => new Promise((resolve) => setTimeout(resolve, 1));

describe('oneAtATime', () => {
  it('runs jobs one after another in arrival order, even when one fails', async () => {
    const events: string[] = [];
    const job = (name: string, fail = false) => async () => {
      events.push(`${name} start`);
      await tick();
      events.push(`${name} end`);
      if (fail) throw new Error(name);
      return name;
    };
    const results = await Promise.allSettled([oneAtATime(job('a')), oneAtATime(job('b', true)), oneAtATime(job('c'))]);
    expect(events).toEqual(['a start', 'a end', 'b start', 'b end', 'c start', 'c end']);
    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
  });
});
