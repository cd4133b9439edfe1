import { describe, expect, it } from "vitest";
import { formatDay } from "../../../app/routes/notes/parts/note-meta";

describe("formatDay", () => {
  it("writes every month's short name, day first, with no leading zero", () => {
    const months = Array.from({ length: 12 }, (_, month) =>
      formatDay(new Date(Date.UTC(2026, month, 3))),
    );
    expect(months).toEqual([
      "3 Jan 2026",
      "3 Feb 2026",
      "3 Mar 2026",
      "3 Apr 2026",
      "3 May 2026",
      "3 Jun 2026",
      "3 Jul 2026",
      "3 Aug 2026",
      "3 Sep 2026",
      "3 Oct 2026",
      "3 Nov 2026",
      "3 Dec 2026",
    ]);
  });

  it("takes the day in UTC, whatever the offset the time was written with", () => {
    // 23:30 on the 30th in New York is already the 31st in UTC; the server and a browser anywhere
    // must print the same day, or hydration would disagree.
    expect(formatDay(new Date("2026-12-30T23:30:00-05:00"))).toBe("31 Dec 2026");
    expect(formatDay(new Date("2027-01-01T00:30:00+01:00"))).toBe("31 Dec 2026");
  });
});
