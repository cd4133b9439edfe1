/**
 * `compute`, remembered for the `limit` keys used last in this isolate. A Worker's isolate serves
 * many requests one after another, so work whose result depends only on its input (a note
 * excerpt's words, say) need not be redone on every page view. A Map keeps its keys in insertion
 * order: a hit moves its key to the end, and the first key is the one used longest ago, dropped
 * when a new key would pass the limit.
 */
export function remembered<I, T>(limit: number, compute: (input: I) => T) {
  const results = new Map<string, T>();
  return (key: string, input: I): T => {
    if (results.has(key)) {
      const result = results.get(key) as T;
      results.delete(key);
      results.set(key, result);
      return result;
    }
    const result = compute(input);
    if (results.size >= limit) results.delete(results.keys().next().value as string);
    results.set(key, result);
    return result;
  };
}
