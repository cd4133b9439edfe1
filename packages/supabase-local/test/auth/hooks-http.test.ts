// Auth hooks that are HTTP endpoints ([auth.hook.*] uri = "http://localhost…"), through the real
// supabase-js: the request Auth signs by the Standard Webhooks scheme, what the hook's answers
// mean, and the send email and send SMS hooks taking over delivery. Postgres hooks: hooks.test.ts.
import { once } from "node:events";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { decodeJwt } from "jose";
import { Webhook } from "standardwebhooks";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { PASSWORD, randomEmail } from "../../../../tests/support/backend.ts";
import { type MemoryBackend, memoryBackend } from "../../../../tests/support/memory-backend.ts";

/** Two secrets, as config.toml's `secrets = "v1,whsec_…|v1,whsec_…"`: each signs every call. */
const SECRETS = [
  `v1,whsec_${Buffer.from("a first secret of 32 bytes......").toString("base64")}`,
  `v1,whsec_${Buffer.from("and a second one, also 32 bytes.").toString("base64")}`,
];

interface Call {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}
/** What the hook server answers on a path: status, content type, body. */
type Answer = { status: number; type?: string; body?: string; headers?: Record<string, string> };

/** The access token hook's answer: the claims it was sent, with one claim added. */
function addClaim(call: Call): Answer {
  const { claims } = JSON.parse(call.body);
  return { status: 200, body: JSON.stringify({ claims: { ...claims, plan: "pro" } }) };
}

const calls: Call[] = [];
/** Per path, the answers still to give (then 200 `{}`, or the access token hook's claims). */
const answers = new Map<string, Answer[]>();
let server: Server;
let hookUrl: string;
let local: MemoryBackend;

beforeAll(async () => {
  server = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const call = {
      path: request.url ?? "",
      headers: request.headers,
      body: Buffer.concat(chunks).toString(),
    };
    calls.push(call);
    const answer =
      answers.get(call.path)?.shift() ??
      (call.path === "/access-token" ? addClaim(call) : { status: 200, body: "{}" });
    response.writeHead(answer.status, {
      "Content-Type": answer.type ?? "application/json",
      ...answer.headers,
    });
    response.end(answer.body ?? "");
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  hookUrl = `http://localhost:${(server.address() as AddressInfo).port}`;
  const hook = (path: string) => ({ uri: `${hookUrl}${path}`, secrets: SECRETS });
  local = await memoryBackend({
    auth: {
      email: { enableConfirmations: true },
      sms: { enableSignup: true, enableConfirmations: true },
      // [auth.mfa.phone] otp_length: the length of the codes the hook gets for MFA
      mfa: {
        phone: { enrollEnabled: true, verifyEnabled: true, maxFrequencySeconds: 0, otpLength: 8 },
      },
      hooks: {
        custom_access_token: hook("/access-token"),
        before_user_created: hook("/before-user-created"),
        send_email: hook("/send-email"),
        send_sms: hook("/send-sms"),
      },
    },
  });
}, 60_000);
afterEach(() => answers.clear());
afterAll(async () => {
  await local?.close();
  server?.close();
});

/** The calls made to `path` whose body mentions `needle` (a test's own address or number). */
const callsTo = (path: string, needle: string) =>
  calls.filter((call) => call.path === path && call.body.includes(needle));

describe("HTTP hooks", () => {
  it("POSTs the event signed with every secret, and signs the claims it answers with", async () => {
    const email = randomEmail("http-claims");
    const created = await local
      .admin()
      .auth.admin.createUser({ email, password: PASSWORD, email_confirm: true });
    if (created.error) throw created.error;
    const client = local.client();
    const { data, error } = await client.auth.signInWithPassword({ email, password: PASSWORD });
    if (error) throw error;
    expect(decodeJwt(data.session.access_token)).toMatchObject({ email, plan: "pro" });
    const [call] = callsTo("/access-token", email);
    if (!call) throw new Error("the hook was not called");
    expect(call.headers["content-type"]).toBe("application/json");
    expect(String(call.headers["webhook-signature"]).split(", ")).toHaveLength(2);
    for (const secret of SECRETS) {
      // each secret alone verifies the request, as the hook's own library would check it
      const verified = new Webhook(secret.replace("v1,", "")).verify(call.body, {
        "webhook-id": call.headers["webhook-id"] as string,
        "webhook-timestamp": call.headers["webhook-timestamp"] as string,
        "webhook-signature": call.headers["webhook-signature"] as string,
      });
      expect(verified).toMatchObject({
        user_id: created.data.user.id,
        authentication_method: "password",
        metadata: { name: "customize-access-token" },
      });
    }
    expect(() =>
      new Webhook(Buffer.from("not the secret of this hook.....").toString("base64")).verify(
        call.body,
        call.headers as Record<string, string>,
      ),
    ).toThrow();
  });

  it("answers a refusal, a wrong content type, a failing hook and an answer over 200 KB as Auth does; a 503 with retry-after is tried again", async () => {
    const signUp = (email: string) => local.client().auth.signUp({ email, password: PASSWORD });
    answers.set("/before-user-created", [
      { status: 200, body: JSON.stringify({ error: { http_code: 422, message: "Not today" } }) },
      { status: 200, type: "text/plain", body: "ok" },
      { status: 401 },
      { status: 500 },
      { status: 200, body: JSON.stringify({ padding: "x".repeat(200 * 1024) }) },
      { status: 503, headers: { "retry-after": "1" } },
    ]);
    expect((await signUp(randomEmail("refused"))).error).toMatchObject({
      status: 422,
      code: "unknown",
      message: "Not today",
    });
    expect((await signUp(randomEmail("plain"))).error).toMatchObject({
      status: 400,
      code: "hook_payload_invalid_content_type",
      message: "Invalid JSON response. Received content-type: text/plain",
    });
    // a 500 is supabase-js's AuthRetryableFetchError, which keeps the status and the message
    expect((await signUp(randomEmail("unauthorized"))).error).toMatchObject({
      status: 500,
      message: "Hook requires authorization token",
    });
    expect((await signUp(randomEmail("failing"))).error).toMatchObject({
      status: 500,
      message: "Unexpected status code returned from hook: 500",
    });
    expect((await signUp(randomEmail("oversized"))).error).toMatchObject({
      status: 422,
      code: "hook_payload_over_size_limit",
      message: "Payload size exceeded size limit of 204800 bytes",
    });
    const retried = randomEmail("retried");
    const { data, error } = await signUp(retried);
    expect(error).toBeNull();
    expect(data.user?.email).toBe(retried);
    expect(callsTo("/before-user-created", retried)).toHaveLength(2);
  });

  it("the send email hook takes the confirmation instead of the inbox, and its code confirms the address", async () => {
    const email = randomEmail("hooked-mail");
    const client = local.client();
    const signedUp = await client.auth.signUp({
      email,
      password: PASSWORD,
      options: { emailRedirectTo: "http://localhost:5173/welcome" },
    });
    if (signedUp.error) throw signedUp.error;
    expect(local.backend.inbox.list(email)).toEqual([]);
    const [call] = callsTo("/send-email", email);
    if (!call) throw new Error("the hook was not called");
    const event = JSON.parse(call.body);
    expect(event.metadata.name).toBe("send-email");
    expect(event.user).toMatchObject({ id: signedUp.data.user?.id, email });
    expect(event.email_data).toEqual({
      token: expect.stringMatching(/^\d{6}$/),
      token_hash: expect.stringMatching(/^[0-9a-f]{56}$/),
      redirect_to: "http://localhost:5173/welcome",
      email_action_type: "signup",
      site_url: `${local.backend.url}/auth/v1`,
      token_new: "",
      token_hash_new: "",
      old_email: "",
      old_phone: "",
      provider: "",
      factor_type: "",
    });
    const verified = await client.auth.verifyOtp({
      email,
      token: event.email_data.token,
      type: "signup",
    });
    expect(verified.error).toBeNull();
    expect(verified.data.user?.email_confirmed_at).toBeTruthy();
  });

  it("the send SMS hook gets a code for any number, for a sign-in and for an MFA challenge", async () => {
    const phone = `1555${String(Math.floor(Math.random() * 1e7)).padStart(7, "0")}`;
    const client = local.client();
    const sent = await client.auth.signInWithOtp({ phone: `+${phone}` });
    expect(sent.error).toBeNull();
    const [call] = callsTo("/send-sms", phone);
    if (!call) throw new Error("the hook was not called");
    const event = JSON.parse(call.body);
    expect(event.sms).toEqual({ otp: expect.stringMatching(/^\d{6}$/), phone });
    expect(event.user).toMatchObject({ phone });
    const signedIn = await client.auth.verifyOtp({ phone, token: event.sms.otp, type: "sms" });
    if (signedIn.error) throw signedIn.error;

    const enrolled = await client.auth.mfa.enroll({ factorType: "phone", phone: `+${phone}` });
    if (enrolled.error) throw enrolled.error;
    const challenge = await client.auth.mfa.challenge({ factorId: enrolled.data.id });
    if (challenge.error) throw challenge.error;
    const mfa = callsTo("/send-sms", phone).map((c) => JSON.parse(c.body).sms);
    expect(mfa.at(-1)).toEqual({ otp: expect.stringMatching(/^\d{8}$/), sms_type: "mfa", phone });
    const verified = await client.auth.mfa.verify({
      factorId: enrolled.data.id,
      challengeId: challenge.data.id,
      code: mfa.at(-1).otp,
    });
    expect(verified.error).toBeNull();
    expect(decodeJwt(verified.data?.access_token ?? "").aal).toBe("aal2");
  });
});
