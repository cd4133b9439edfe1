import { describe, expect, it } from "vitest";
import { remembered } from "../../../app/routes/notes/parts/remembered";

/** A remembered doubling that counts how often it really ran. */
function counted(limit: number) {
  const runs: number[] = [];
  const double = remembered(limit, (n: number) => {
    runs.push(n);
    return n * 2;
  });
  return { double, runs };
}

describe("remembered", () => {
  it("computes a key once, and answers it again from memory", () => {
    const { double, runs } = counted(3);
    expect(double("a", 1)).toBe(2);
    expect(double("a", 1)).toBe(2);
    expect(double("b", 2)).toBe(4);
    expect(runs).toEqual([1, 2]);
  });

  it("keeps the keys used last: a hit keeps a key, the one used longest ago goes first", () => {
    const { double, runs } = counted(2);
    double("a", 1);
    double("b", 2);
    double("a", 1); // a is now the one used last
    double("c", 3); // over the limit: b goes, not a
    double("a", 1);
    expect(runs).toEqual([1, 2, 3]);
    double("b", 2);
    expect(runs).toEqual([1, 2, 3, 2]);
  });

  it("never holds more than its limit", () => {
    const { double, runs } = counted(100);
    for (let i = 0; i < 250; i++) double(String(i), i);
    for (let i = 0; i < 250; i++) double(String(i), i);
    // the second pass finds none of them: each was dropped 100 keys after it was made
    expect(runs).toHaveLength(500);
    for (let i = 150; i < 250; i++) double(String(i), i);
    expect(runs).toHaveLength(500);
  });

  it("keeps a falsy result as a result", () => {
    const { double, runs } = counted(2);
    expect(double("zero", 0)).toBe(0);
    expect(double("zero", 0)).toBe(0);
    expect(runs).toEqual([0]);
  });
});
