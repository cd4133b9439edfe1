import { describe, expect, it } from "vitest";
import { isRecoverySession } from "../../../app/routes/auth/parts/recovery-session";

describe("isRecoverySession", () => {
  const now = 1_800_000_000;
  it("is true for a fresh recovery or emailed-code sign-in only", () => {
    expect(isRecoverySession({ amr: [{ method: "recovery", timestamp: now - 60 }] }, now)).toBe(
      true,
    );
    expect(isRecoverySession({ amr: [{ method: "otp", timestamp: now - 60 }] }, now)).toBe(true);
    expect(isRecoverySession({ amr: [{ method: "password", timestamp: now - 60 }] }, now)).toBe(
      false,
    );
    expect(isRecoverySession({ amr: [{ method: "recovery", timestamp: now - 7200 }] }, now)).toBe(
      false,
    );
    expect(isRecoverySession({ amr: "recovery" }, now)).toBe(false);
    expect(isRecoverySession(null, now)).toBe(false);
  });
});
