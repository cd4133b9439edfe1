import { data, Form, isRouteErrorResponse, Link } from "react-router";
import { Avatar } from "../../components/avatar";
import { FormAlert } from "../../components/form-alert";
import { FormField } from "../../components/form-field";
import { SubmitButton } from "../../components/submit-button";
import { offersImageTransformations } from "../../lib/backend-features.server";
import { formFailure } from "../../lib/form-results.server";
import { readFormValues, validateForm } from "../../lib/forms.server";
import { requireUser } from "../../lib/guards.server";
import { backendFailure, dataNoStore, notFound } from "../../lib/http.server";
import { accessToken, storageCalls } from "../../lib/storage.server";
import { useAvatarSource } from "../../lib/use-avatar-source";
import { useFocusFirstError } from "../../lib/use-focus-first-error";
import { getSupabaseEnv } from "../../lib/worker-context.server";
import type { Route } from "./+types/note";
import { Attachments } from "./parts/attachments";
import { withSignedUrls } from "./parts/attachments.server";
import {
  leaveSharedNote,
  listShares,
  loadNote,
  parseNoteId,
  unshareNote,
  viewerOf,
} from "./parts/data.server";
import { LeaveSharedNote } from "./parts/leave-shared-note";
import { useLiveNote } from "./parts/live";
import { Markdown } from "./parts/markdown";
import { renderMarkdown } from "./parts/markdown.server";
import { BackLink, NotePage } from "./parts/note-form";
import { Viewers } from "./parts/note-live";
import { NoteDate, ownerName, TagLink } from "./parts/note-meta";
import { NoteToggles, optimisticState, useNoteToggles } from "./parts/note-toggles";
import { redirectBack } from "./parts/redirects.server";
import { ATTACHMENT_ERRORS, type AttachmentError } from "./parts/rules";
import { leaveSchema, shareSchema, unshareSchema } from "./parts/schemas.server";
import { toggleAction } from "./parts/toggle.server";

export const meta: Route.MetaFunction = ({ loaderData }) => [
  { title: `${loaderData?.note.title ?? "Note"} · Edge Notes` },
];

export async function loader({ request, context, params }: Route.LoaderArgs) {
  const { supabase, claims, backendFetch } = requireUser(request, context);
  const id = parseNoteId(params.id);
  // Side by side, one round trip's wait: the note, its shares (null when the note is not the
  // user's), the user's own name and picture (for "… is also viewing" on a reader's page) and,
  // once per isolate, whether Storage has image transformations (for the thumbnails).
  const env = getSupabaseEnv(context);
  const [note, shares, me, transformations] = await Promise.all([
    loadNote(supabase, id),
    listShares(supabase, id),
    viewerOf(supabase, claims.sub),
    offersImageTransformations(env.url, env.publishableKey, fetch, env.timeoutMs),
  ]);
  const mine = note.owner_id === claims.sub;
  // Files: signed URLs made now, as this user, that live 5 minutes (never cached: no-store); the
  // one more round trip a page showing private files may make.
  const token = await accessToken(supabase);
  const attachments =
    token && note.attachments.length > 0
      ? await withSignedUrls(
          storageCalls(env, token, backendFetch),
          note.attachments,
          transformations === true,
        )
      : [];
  const code = new URL(request.url).searchParams.get("attachment_error");
  return dataNoStore({
    attachments,
    attachmentError:
      code && Object.hasOwn(ATTACHMENT_ERRORS, code) ? (code as AttachmentError) : null,
    note,
    mine,
    shares: (mine && shares) || [],
    body: note.body ? renderMarkdown(note.body) : null,
    me,
  });
}

const SHARE_MESSAGES = {
  shared: null,
  already_shared: "This note is already shared with that person.",
  unknown_email:
    "There is no Edge Notes account with that email. Ask them to sign up first, then share again.",
  own_email: "That is your own email address: you can already read your notes.",
  too_many_attempts:
    "Too many addresses without an account were tried in the last hour. Try again later.",
} as const;

export async function action({ request, context, params }: Route.ActionArgs) {
  const { supabase, claims } = requireUser(request, context);
  const id = parseNoteId(params.id);
  const values = await readFormValues(request);
  switch (values.intent) {
    case "share": {
      const parsed = validateForm(values, shareSchema);
      if (!parsed.ok) return formFailure(parsed);
      const { data: outcome, error } = await supabase.rpc("share_note", {
        note_id: id,
        email: parsed.data.email,
      });
      if (error?.code === "PT404") notFound();
      // The database's own refusal of this session (aal1 with a second factor, anonymous): the
      // guard above normally answers first.
      if (error?.code === "42501") throw data(null, { status: 403, statusText: "Forbidden" });
      if (error) backendFailure(error);
      const message = SHARE_MESSAGES[outcome];
      if (message) {
        const status =
          outcome === "too_many_attempts" ? 429 : outcome === "already_shared" ? 409 : 400;
        return formFailure(
          { errors: { fields: { email: message } }, values: parsed.values },
          status,
        );
      }
      return dataNoStore({ ok: true as const, shared: parsed.data.email });
    }
    case "unshare": {
      const parsed = validateForm(values, unshareSchema);
      if (!parsed.ok) notFound();
      const removed = await unshareNote(supabase, {
        id,
        ownerId: claims.sub,
        email: parsed.data.email,
      });
      if (!removed) notFound();
      return dataNoStore({ ok: true as const, unshared: parsed.data.email });
    }
    case "leave": {
      const parsed = validateForm(values, leaveSchema);
      if (!parsed.ok) notFound();
      if (!(await leaveSharedNote(supabase, { id, userId: claims.sub }))) notFound();
      const back = parsed.data.returnTo;
      // The note page itself is gone for them now: back to the list instead.
      return redirectBack(
        back?.startsWith(`/notes/${id}`) ? undefined : back,
        "/notes?view=shared",
      );
    }
    default:
      return toggleAction(supabase, id, values, `/notes/${id}`);
  }
}

export default function NotePageRoute({ loaderData, actionData }: Route.ComponentProps) {
  const { note, mine, shares, body } = loaderData;
  // Live: an edit saved elsewhere, a pin, a share or an unshare re-reads this page (the data API
  // decides what it may still show); the others reading it are named.
  const others = useLiveNote(note.id, loaderData.me);
  const toggles = useNoteToggles();
  const avatars = useAvatarSource();
  const shown = optimisticState(note, toggles.pending(note.id));
  return (
    <NotePage>
      <BackLink
        to={mine ? (note.archived ? "/notes?view=archived" : "/notes") : "/notes?view=shared"}
      >
        {mine ? (note.archived ? "Archived notes" : "All notes") : "Shared with me"}
      </BackLink>
      <article
        className="mt-4 rounded-2xl border border-ink-200 bg-white p-6 shadow-sm sm:p-8 dark:border-ink-800 dark:bg-ink-800/40"
        data-testid="note"
      >
        <header>
          <div className="flex flex-wrap items-center gap-2 text-xs">
            {shown.pinned ? <Badge tone="amber">Pinned</Badge> : null}
            {shown.archived ? <Badge tone="ink">Archived</Badge> : null}
            {mine ? null : (
              <span className="inline-flex items-center gap-1.5" data-testid="note-owner">
                <Avatar
                  source={avatars}
                  path={note.owner?.avatar_path ?? null}
                  name={ownerName(note.owner)}
                  size={20}
                />
                <Badge tone="brand">{`Shared by ${ownerName(note.owner)} · read-only`}</Badge>
              </span>
            )}
          </div>
          <h1
            className="mt-2 text-3xl font-semibold tracking-tight break-words"
            data-testid="note-title"
          >
            {note.title}
          </h1>
          <p className="mt-2 text-xs text-ink-600 dark:text-ink-400">
            <NoteDate iso={note.updated_at} prefix="Edited" /> ·{" "}
            <NoteDate iso={note.created_at} prefix="created" />
          </p>
          <Viewers viewers={others} />
          {note.tags.length > 0 ? (
            <div className="mt-3 flex flex-wrap gap-2">
              {note.tags.map((tag) => (
                <TagLink key={tag.name} name={tag.name} />
              ))}
            </div>
          ) : null}
        </header>
        <div className="mt-6">
          {body ? (
            <Markdown tree={body} testId="note-body" />
          ) : (
            <p className="text-muted" data-testid="note-body">
              (No text)
            </p>
          )}
        </div>
        {mine ? (
          <footer
            className="mt-8 flex flex-wrap items-center gap-2 border-t border-ink-200 pt-4 dark:border-ink-800"
            onSubmit={toggles.onSubmit}
          >
            <Link
              to={`/notes/${note.id}/edit`}
              className="inline-flex items-center rounded-lg bg-brand-600 px-3 py-1.5 text-xs font-medium text-white hover:bg-brand-700"
            >
              Edit
            </Link>
            <NoteToggles
              id={note.id}
              title={note.title}
              shown={shown}
              returnTo={`/notes/${note.id}`}
              watched={toggles.submitted.has(note.id)}
            />
            <Link
              to={`/notes/${note.id}/delete`}
              className="ml-auto inline-flex items-center rounded-lg px-3 py-1.5 text-xs font-medium text-red-700 hover:bg-red-50 dark:text-red-300 dark:hover:bg-red-950"
            >
              Delete…
            </Link>
          </footer>
        ) : null}
      </article>
      <Attachments
        noteId={note.id}
        attachments={loaderData.attachments}
        mine={mine}
        error={loaderData.attachmentError}
      />
      {mine ? (
        <Sharing shares={shares} actionData={actionData} />
      ) : (
        <div className="mt-4">
          <LeaveSharedNote id={note.id} title={note.title} returnTo="/notes?view=shared" />
        </div>
      )}
    </NotePage>
  );
}

/**
 * A note that is not there for this user: never was, deleted, or no longer shared with them (a
 * live re-read after an unshare lands here too). The same 404 for each, as the loader gives.
 */
export function ErrorBoundary({ error }: Route.ErrorBoundaryProps) {
  if (!isRouteErrorResponse(error) || error.status !== 404) throw error;
  return (
    <NotePage>
      <BackLink to="/notes">All notes</BackLink>
      <div
        className="mt-4 rounded-2xl border border-line bg-surface p-6 sm:p-8"
        data-testid="note-gone"
      >
        <h1 className="text-2xl font-semibold tracking-tight">This note is not available</h1>
        <p className="mt-2 text-sm text-muted">
          It may have been deleted, or it is no longer shared with you.{" "}
          <Link
            to="/notes?view=shared"
            className="font-medium text-accent underline-offset-2 hover:underline"
          >
            Notes shared with you
          </Link>
        </p>
      </div>
    </NotePage>
  );
}

function Badge({ tone, children }: { tone: "amber" | "ink" | "brand"; children: React.ReactNode }) {
  const colours = {
    amber: "bg-amber-100 text-amber-900 dark:bg-amber-950 dark:text-amber-100",
    ink: "bg-ink-100 text-ink-800 dark:bg-ink-800 dark:text-ink-100",
    brand: "bg-brand-50 text-brand-700 dark:bg-brand-500/15 dark:text-brand-300",
  }[tone];
  return <span className={`rounded-full px-2 py-0.5 font-medium ${colours}`}>{children}</span>;
}

type Shares = Route.ComponentProps["loaderData"]["shares"];

function Sharing({
  shares,
  actionData,
}: {
  shares: Shares;
  actionData: Route.ComponentProps["actionData"];
}) {
  const formRef = useFocusFirstError(actionData);
  const failed = actionData && "errors" in actionData ? actionData : undefined;
  const shared = actionData && "shared" in actionData ? actionData.shared : undefined;
  return (
    <section
      aria-labelledby="sharing-title"
      className="mt-6 rounded-2xl border border-ink-200 bg-white p-6 shadow-sm sm:p-8 dark:border-ink-800 dark:bg-ink-800/40"
      data-testid="sharing"
    >
      <h2 id="sharing-title" className="text-lg font-semibold tracking-tight">
        Sharing
      </h2>
      <p className="mt-1 text-sm text-ink-600 dark:text-ink-400">
        People you share with can read this note and its attachments, not change them. They need an
        Edge Notes account.
      </p>
      <p className="mt-1 text-sm text-ink-600 dark:text-ink-400" data-testid="revoke-note">
        When you stop sharing, they lose access at their next read: links to files they already
        opened stop working within 5 minutes, but files they already downloaded stay with them.
      </p>
      <Form
        method="post"
        noValidate
        ref={formRef}
        className="mt-4 flex flex-col gap-3 sm:flex-row sm:items-start"
      >
        <FormField
          label="Share with (email)"
          name="email"
          type="email"
          inputMode="email"
          autoComplete="off"
          required
          className="flex-1"
          defaultValue={failed?.values.email}
          error={failed?.errors.fields.email}
        />
        <SubmitButton intent="share" className="w-auto! px-5 sm:mt-7">
          Share
        </SubmitButton>
      </Form>
      {shared ? (
        <div className="mt-3">
          <FormAlert tone="success">{`Shared with ${shared}.`}</FormAlert>
        </div>
      ) : null}
      {shares.length > 0 ? (
        <ul className="mt-5 divide-y divide-ink-200 dark:divide-ink-800" data-testid="share-list">
          {shares.map((share) => (
            <li
              key={`${share.email} ${share.created_at}`}
              className="flex flex-wrap items-center justify-between gap-3 py-3 text-sm"
            >
              <div className="min-w-0">
                <p className="font-medium break-all">{share.email}</p>
                {share.profile.display_name || share.profile.username ? (
                  <p className="text-xs text-ink-600 dark:text-ink-400">
                    {ownerName(share.profile)}
                  </p>
                ) : null}
              </div>
              <Form method="post">
                <input type="hidden" name="email" value={share.email} />
                <SubmitButton
                  intent="unshare"
                  variant="secondary"
                  className="w-auto! px-3 py-1.5! text-xs"
                  aria-label={`Stop sharing with ${share.email}`}
                >
                  Stop sharing
                </SubmitButton>
              </Form>
            </li>
          ))}
        </ul>
      ) : (
        <p className="mt-4 text-sm text-ink-600 dark:text-ink-400">Not shared with anyone.</p>
      )}
    </section>
  );
}
