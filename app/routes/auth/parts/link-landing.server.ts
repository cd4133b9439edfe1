import { type LinkProblem, linkProblem, linkProblemPage } from "../../../lib/auth-errors";
import { dataNoStore } from "../../../lib/http.server";

const STATUS: Record<LinkProblem, number> = {
  "other-browser": 400,
  invalid: 400,
  denied: 403,
  taken: 409,
  expired: 410,
  used: 410,
  "rate-limited": 429,
};

/** The loader answer for a link that did not work: its page, its code and a fitting 4xx. */
export function linkProblemResponse(
  code: string | undefined,
  options: { signedIn: boolean; kind: "recovery" | "sign-in" },
) {
  const problem = linkProblem(code, options);
  return dataNoStore(
    { kind: "problem" as const, page: linkProblemPage(problem, options.kind, options), code },
    { status: STATUS[problem] },
  );
}

export const EMAIL_CHANGE_HALF_DONE =
  "Confirmed. Now open the link we sent to your other email address to finish the change.";

/** The loader answer for "half done, look at the other inbox" (email change, two addresses). */
export function linkNoticeResponse(message: string) {
  return dataNoStore({ kind: "notice" as const, message });
}
