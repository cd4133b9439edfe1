/**
 * The fuzzy string match PostgREST uses for its "Perhaps you meant …" hints (the Haskell
 * `fuzzyset` package, itself a port of Python's fuzzyset): strings are lowercased and kept to
 * letters, digits, spaces and commas; candidates are ranked by the cosine similarity of their
 * character 3-grams (2-grams when no 3-gram matches), the best 50 re-ranked by Levenshtein
 * similarity, and the best above `minScore` wins.
 */

const normalized = (s: string) => s.toLowerCase().replace(/[^\p{L}\p{N}\s,]/gu, "");

function grams(value: string, size: number): Map<string, number> {
  let padded = `-${normalized(value)}-`;
  if (padded.length < size) padded = padded.padEnd(size, "-");
  const out = new Map<string, number>();
  for (let i = 0; i + size <= padded.length; i++) {
    const g = padded.slice(i, i + size);
    out.set(g, (out.get(g) ?? 0) + 1);
  }
  return out;
}

const norm = (v: Map<string, number>) =>
  Math.sqrt([...v.values()].reduce((sum, n) => sum + n * n, 0));

function levenshtein(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++)
      current[j] = Math.min(
        (previous[j] as number) + 1,
        (current[j - 1] as number) + 1,
        (previous[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    previous = current;
  }
  return previous[b.length] as number;
}

function distance(a: string, b: string): number {
  const x = normalized(a);
  const y = normalized(b);
  const longest = Math.max(x.length, y.length);
  return longest === 0 ? 1 : 1 - levenshtein(x, y) / longest;
}

/** The best of `candidates` for `value` scoring at least `minScore`, or undefined. */
export function closest(
  candidates: readonly string[],
  value: string,
  minScore = 0.33,
): string | undefined {
  const unique = [...new Set(candidates)];
  for (const size of [3, 2]) {
    const query = grams(value, size);
    const queryNorm = norm(query);
    const scored = unique
      .map((candidate) => {
        const g = grams(candidate, size);
        let dot = 0;
        for (const [k, n] of query) dot += n * (g.get(k) ?? 0);
        return { candidate, score: dot === 0 ? 0 : dot / (queryNorm * norm(g)) };
      })
      .filter((s) => s.score > 0)
      .sort((a, b) => b.score - a.score)
      .slice(0, 50);
    if (scored.length === 0) continue;
    const ranked = scored
      .map((s) => ({ candidate: s.candidate, score: distance(value, s.candidate) }))
      .sort((a, b) => b.score - a.score)
      .filter((s) => s.score >= minScore);
    return ranked[0]?.candidate;
  }
  return undefined;
}
