/** The middle sample (the upper one of an even count), as every bench reports its runs. */
export function median(samples: readonly number[]): number {
  return [...samples].sort((a, b) => a - b)[Math.floor(samples.length / 2)]!;
}
