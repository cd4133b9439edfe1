import { Form } from "react-router";
import { SubmitButton } from "../../../components/submit-button";

/**
 * "Remove from my list" for a note someone shared with the user: a plain form posting
 * `intent=leave` to the note's action, which deletes the user's share (they can no longer read
 * the note) and goes back to `returnTo`. Works the same with JavaScript off.
 */
export function LeaveSharedNote({
  id,
  title,
  returnTo,
}: {
  id: string;
  title: string;
  returnTo: string;
}) {
  return (
    <Form method="post" action={`/notes/${id}`} data-testid="leave-shared-note">
      <input type="hidden" name="returnTo" value={returnTo} />
      <SubmitButton
        intent="leave"
        variant="secondary"
        className="w-auto! px-2.5 py-1.5! text-xs"
        aria-label={`Remove from my list: “${title}”`}
      >
        Remove from my list
      </SubmitButton>
    </Form>
  );
}
