import { Form } from "react-router";
import { SubmitButton } from "../../../components/submit-button";
import { useCountdown } from "./countdown";

/**
 * "Resend" for an email that was just sent. When the auth server said "only after N seconds",
 * the wait is shown and, with JavaScript on, counted down with the button disabled until then.
 */
export function ResendForm({
  email,
  next,
  intent = "resend",
  retryAfter,
  answer,
  children,
}: {
  email: string;
  next?: string;
  intent?: string;
  retryAfter?: number;
  /** The latest action answer (restarts the countdown on each one). */
  answer: unknown;
  children?: React.ReactNode;
}) {
  const left = useCountdown(retryAfter, answer);
  const waiting = retryAfter !== undefined && left > 0;
  return (
    <Form method="post" className="space-y-1 text-sm">
      <input type="hidden" name="email" value={email} />
      <input type="hidden" name="next" value={next ?? ""} />
      {children ? <p>{children}</p> : null}
      <div className="flex items-center gap-3">
        <SubmitButton intent={intent} variant="link" disabled={waiting}>
          Resend
        </SubmitButton>
        <span aria-live="polite" className="text-muted tabular-nums">
          {waiting ? `You can resend in ${left} s.` : ""}
        </span>
      </div>
    </Form>
  );
}
