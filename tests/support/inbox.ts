import type { InboxMessage } from "@edge-notes/supabase-local";
import { BACKEND_URL } from "./backend.ts";

export type { InboxMessage };

/** Messages sent to `to`, newest first (the backend's inbox JSON API). */
export async function messagesFor(to: string): Promise<InboxMessage[]> {
  const response = await fetch(`${BACKEND_URL}/inbox/api/messages?to=${encodeURIComponent(to)}`);
  if (!response.ok) throw new Error(`inbox: ${response.status}`);
  return ((await response.json()) as { messages: InboxMessage[] }).messages;
}

/** The newest message to `to` (optionally of one type); fails when there is none. */
export async function latestMessage(to: string, type?: string): Promise<InboxMessage> {
  const message = (await messagesFor(to)).find((m) => !type || m.type === type);
  if (!message) throw new Error(`no ${type ?? ""} message for ${to}`);
  return message;
}

/** The link in a message that goes through /auth/v1/verify. */
export function verifyLink(message: InboxMessage): string {
  const link = message.links.find((l) => l.includes("/auth/v1/verify"));
  if (!link) throw new Error(`no verify link in: ${message.links.join(", ")}`);
  return link;
}
