import { AuthCard } from "../../../components/auth-card";
import { FormAlert } from "../../../components/form-alert";
import { ResendForm } from "./resend-form";

interface Answer {
  ok: boolean;
  notice?: string;
  errors?: { form?: string; code?: string; retryAfter?: number; fields: Record<string, string> };
}

/** "Check your inbox" after an email was sent, with a Resend that respects the server's limit. */
export function CheckInbox({
  title = "Check your inbox",
  email,
  next,
  answer,
  children,
  footer,
}: {
  title?: string;
  email: string;
  next?: string;
  answer: Answer | undefined;
  children: React.ReactNode;
  footer?: React.ReactNode;
}) {
  const errors = answer && !answer.ok ? answer.errors : undefined;
  const message = errors?.form ?? errors?.fields.email;
  return (
    <AuthCard title={title} footer={footer}>
      <div className="space-y-4 text-sm text-muted">
        <div
          aria-hidden="true"
          className="grid size-12 place-items-center rounded-full bg-accent-subtle text-2xl"
        >
          ✉
        </div>
        {children}
        {answer?.ok && answer.notice ? <FormAlert tone="success">{answer.notice}</FormAlert> : null}
        {message ? <FormAlert code={errors?.code}>{message}</FormAlert> : null}
        <ResendForm email={email} next={next} retryAfter={errors?.retryAfter} answer={answer}>
          Nothing after a few minutes? Check your spam folder, or send it again.
        </ResendForm>
      </div>
    </AuthCard>
  );
}
