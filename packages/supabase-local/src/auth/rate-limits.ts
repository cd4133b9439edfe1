import type { Config } from "../project/config.ts";
import { authError } from "./errors.ts";
import { clientIp } from "./http/request.ts";

/**
 * Auth's rate limits as the real service keeps them (internal/api/apilimiter): one limiter per
 * route family, each counting per client address in token buckets (tollbooth over
 * golang.org/x/time/rate) that hold `burst` tokens, start full, lose one per request and refill
 * at the configured rate:
 *
 * - `token_refresh`: every other /token grant (password, refresh_token, pkce, id_token);
 *   `token_refresh` (RATE_LIMIT_TOKEN_REFRESH) per 5 minutes, burst 30.
 * - `signups`, `otp`, `magic_link`, `recover`, `resend`, `user`: /signup (email or phone), /otp,
 *   /magiclink, /recover, /resend and PUT /user, one limiter each (a spent /recover leaves /otp
 *   alone); `sign_in_sign_ups` (RATE_LIMIT_OTP) per 5 minutes, burst 30.
 * - `token_verifications`: GET and POST /verify; `token_verifications` (RATE_LIMIT_VERIFY) per
 *   5 minutes, burst 30.
 * - `anonymous_users`: anonymous /signup; `anonymous_users` (RATE_LIMIT_ANONYMOUS_USERS) per hour,
 *   with the whole hour's allowance as the burst.
 * - `mfa_challenge`, `mfa_verify`: POST /factors/{id}/challenge and /verify (and, our choice, as
 *   upstream has no recovery codes yet, POST /factors/recovery-codes/verify in `mfa_verify`);
 *   MFA_RATE_LIMIT_CHALLENGE_AND_VERIFY (15, no config.toml key) per minute, burst 30.
 * - `passkey`: POST /passkeys/authentication/options; RATE_LIMIT_PASSKEY (30, no config.toml key)
 *   per 5 minutes, burst 30.
 * - `web3`: /token with grant_type=web3, instead of `token_refresh`; `web3` (RATE_LIMIT_WEB3) per
 *   5 minutes, burst 30.
 *
 * A bucket is dropped when its time to live has passed since it was made (tollbooth's expirable
 * cache: an hour, a minute for MFA), so the next request from that address starts full again.
 *
 * Project-wide, not per address, as upstream's ratelimit.IntervalLimiter: `email_sent`
 * (RATE_LIMIT_EMAIL_SENT: every email while confirmations are on) and `sms_sent`
 * (RATE_LIMIT_SMS_SENT: every SMS code to a number without a test code), each a count per hour
 * that starts over every whole hour.
 *
 * Over the limit: 429 `over_request_rate_limit` "Request rate limit reached", or for emails 429
 * `over_email_send_rate_limit` "email rate limit exceeded", for SMS 429 `over_sms_send_rate_limit`
 * "SMS rate limit exceeded". The client's address is the socket's (or Sb-Forwarded-For, or a proxy
 * header the backend is told to trust): see clientIp.
 */
export type Bucket =
  | "token_refresh"
  | "signups"
  | "otp"
  | "magic_link"
  | "recover"
  | "resend"
  | "user"
  | "token_verifications"
  | "anonymous_users"
  | "mfa_challenge"
  | "mfa_verify"
  | "passkey"
  | "web3";

type Limits = Config["auth"]["rateLimit"];

const MINUTE = 60 * 1000;
const FIVE_MINUTES = 5 * MINUTE;
const HOUR = 60 * MINUTE;

/** Each bucket's size and refill (`events` per `interval`) and how long it lives (apilimiter.New). */
const SHAPES: Record<
  Bucket,
  { events: (limits: Limits) => number; interval: number; burst?: number; ttl: number }
> = {
  token_refresh: { events: (l) => l.tokenRefresh, interval: FIVE_MINUTES, burst: 30, ttl: HOUR },
  signups: { events: (l) => l.signInSignUps, interval: FIVE_MINUTES, burst: 30, ttl: HOUR },
  otp: { events: (l) => l.signInSignUps, interval: FIVE_MINUTES, burst: 30, ttl: HOUR },
  magic_link: { events: (l) => l.signInSignUps, interval: FIVE_MINUTES, burst: 30, ttl: HOUR },
  recover: { events: (l) => l.signInSignUps, interval: FIVE_MINUTES, burst: 30, ttl: HOUR },
  resend: { events: (l) => l.signInSignUps, interval: FIVE_MINUTES, burst: 30, ttl: HOUR },
  user: { events: (l) => l.signInSignUps, interval: FIVE_MINUTES, burst: 30, ttl: HOUR },
  token_verifications: {
    events: (l) => l.tokenVerifications,
    interval: FIVE_MINUTES,
    burst: 30,
    ttl: HOUR,
  },
  // SetBurst(int(RateLimitAnonymousUsers)): the hour's whole allowance at once.
  anonymous_users: { events: (l) => l.anonymousUsers, interval: HOUR, ttl: HOUR },
  mfa_challenge: {
    events: (l) => l.mfaChallengeAndVerify,
    interval: MINUTE,
    burst: 30,
    ttl: MINUTE,
  },
  mfa_verify: { events: (l) => l.mfaChallengeAndVerify, interval: MINUTE, burst: 30, ttl: MINUTE },
  passkey: { events: (l) => l.passkey, interval: FIVE_MINUTES, burst: 30, ttl: HOUR },
  web3: { events: (l) => l.web3, interval: FIVE_MINUTES, burst: 30, ttl: HOUR },
};

/** ratelimit.IntervalLimiter: `events` per `interval`; the count resets every whole interval
 * since the window opened. */
class IntervalLimiter {
  private readonly events: number;
  private readonly interval: number;
  private start: number;
  private count = 0;
  constructor(events: number, interval: number, now: number) {
    this.events = events;
    this.interval = interval;
    this.start = now;
  }
  allow(now: number): boolean {
    const elapsed = Math.floor((now - this.start) / this.interval);
    if (elapsed > 0) {
      this.start += elapsed * this.interval;
      this.count = 0;
    }
    if (this.count < this.events) {
      this.count++;
      return true;
    }
    return false;
  }
}

/**
 * x/time/rate's Limiter as tollbooth keeps one per address: `burst` tokens, full at first, one
 * taken per request, refilled continuously at `events` per `interval`; gone at `expires`.
 */
class TokenBucket {
  private readonly perMs: number;
  private readonly burst: number;
  private tokens: number;
  private last: number;
  readonly expires: number;
  constructor(perMs: number, burst: number, now: number, ttl: number) {
    this.perMs = perMs;
    this.burst = burst;
    this.tokens = burst;
    this.last = now;
    this.expires = now + ttl;
  }
  allow(now: number): boolean {
    // A clock that went back refills nothing (x/time/rate's advance).
    this.tokens = Math.min(this.burst, this.tokens + Math.max(0, now - this.last) * this.perMs);
    this.last = now;
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return true;
    }
    return false;
  }
}

export class RateLimits {
  private readonly buckets = new Map<string, TokenBucket>();
  private readonly email: IntervalLimiter;
  private readonly sms: IntervalLimiter;
  private readonly limits: Limits;
  private readonly clock: () => number;
  constructor(limits: Limits, clock: () => number = () => Date.now()) {
    this.limits = limits;
    this.clock = clock;
    this.email = new IntervalLimiter(limits.emailSent, HOUR, clock());
    this.sms = new IntervalLimiter(limits.smsSent, HOUR, clock());
  }

  /** Takes a token from `bucket` for the request's client address; 429 when there is none. */
  check(bucket: Bucket, request: Request): void {
    const now = this.clock();
    const key = `${bucket}:${clientIp(request)}`;
    let tokens = this.buckets.get(key);
    if (!tokens || now > tokens.expires) {
      // Many client addresses: forget the buckets whose time is up (memory stays bounded).
      if (this.buckets.size >= 10_000) this.prune(now);
      const shape = SHAPES[bucket];
      const events = shape.events(this.limits);
      const burst = shape.burst ?? Math.trunc(events);
      tokens = new TokenBucket(events / shape.interval, burst, now, shape.ttl);
      this.buckets.set(key, tokens);
    }
    if (!tokens.allow(now)) throw authError("requestRateLimit");
  }

  /** One more email out of email_sent per hour, or 429 over_email_send_rate_limit. */
  checkEmail(): void {
    if (!this.email.allow(this.clock())) throw authError("emailRateLimit");
  }

  /** One more SMS out of sms_sent per hour, or 429 over_sms_send_rate_limit. */
  checkSms(): void {
    if (!this.sms.allow(this.clock())) throw authError("smsRateLimit");
  }

  private prune(now: number): void {
    for (const [key, tokens] of this.buckets) {
      if (now > tokens.expires) this.buckets.delete(key);
    }
  }
}
