import type { Config } from "../config.ts";
import { authError } from "./errors.ts";
import { clientIp } from "./request.ts";

/**
 * [auth.rate_limit] as the CLI hands it to the real service (GOTRUE_RATE_LIMIT_*), counted per
 * window the way the CLI documents each setting:
 *
 * | setting               | real limiter            | endpoints                                          | window        |
 * | --------------------- | ----------------------- | -------------------------------------------------- | ------------- |
 * | `sign_in_sign_ups`    | RATE_LIMIT_OTP          | /signup, /otp, /magiclink, /recover, /resend, PUT /user | 5 min per IP |
 * | `token_refresh`       | RATE_LIMIT_TOKEN_REFRESH | /token (every grant: password, refresh_token, pkce) | 5 min per IP |
 * | `token_verifications` | RATE_LIMIT_VERIFY       | /verify (GET and POST)                             | 5 min per IP  |
 * | `anonymous_users`     | RATE_LIMIT_ANONYMOUS_USERS | anonymous /signup                              | 1 h per IP    |
 * | `email_sent`          | RATE_LIMIT_EMAIL_SENT   | every email (when confirmations are on)            | 1 h, project-wide |
 * | `sms_sent`            | RATE_LIMIT_SMS_SENT     | every SMS code to a number without a test code ([auth.sms] enable_confirmations on) | 1 h, project-wide |
 *
 * and, with no config.toml key (the CLI has none), the MFA limiters at the real defaults:
 * `mfa_challenge` (POST /factors/{id}/challenge) and `mfa_verify` (POST /factors/{id}/verify),
 * MFA_RATE_LIMIT_CHALLENGE_AND_VERIFY (15) a minute per IP each, as token buckets holding 30; and
 * `passkey` (POST /passkeys/authentication/options), RATE_LIMIT_PASSKEY (30) per 5 minutes per IP,
 * a token bucket holding 30.
 *
 * Over the limit: 429 `over_request_rate_limit` "Request rate limit reached", or for emails 429
 * `over_email_send_rate_limit` "email rate limit exceeded", for SMS 429 `over_sms_send_rate_limit`
 * "SMS rate limit exceeded". The client's address is the socket's
 * (or a proxy header the backend is told to trust): see clientIp.
 */
export type Bucket =
  | "sign_in_sign_ups"
  | "token_refresh"
  | "token_verifications"
  | "anonymous_users"
  | "mfa_challenge"
  | "mfa_verify"
  | "passkey";

const MINUTE = 60 * 1000;
const FIVE_MINUTES = 5 * 60 * 1000;
const HOUR = 60 * 60 * 1000;

const WINDOWS: Record<Bucket, number> = {
  sign_in_sign_ups: FIVE_MINUTES,
  token_refresh: FIVE_MINUTES,
  token_verifications: FIVE_MINUTES,
  anonymous_users: HOUR,
  mfa_challenge: MINUTE,
  mfa_verify: MINUTE,
  passkey: FIVE_MINUTES,
};

/** The buckets limited as the real service does them, not in fixed windows (see TokenBucket). */
const TOKEN_BUCKETS: Partial<Record<Bucket, { burst: number }>> = {
  mfa_challenge: { burst: 30 },
  mfa_verify: { burst: 30 },
  passkey: { burst: 30 },
};

interface Limiter {
  allow(now: number): boolean;
  idleSince(now: number): number;
}

/** ratelimit.IntervalLimiter: `events` per `interval`; the count resets every whole interval
 * since the window opened. */
class IntervalLimiter implements Limiter {
  private readonly events: number;
  private readonly interval: number;
  private start: number;
  private count = 0;
  constructor(events: number, interval: number, now: number) {
    this.events = events;
    this.interval = interval;
    this.start = now;
  }
  /** How long ago the current window opened. */
  idleSince(now: number): number {
    return now - this.start;
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
 * The real limiter (tollbooth over golang.org/x/time/rate): a bucket of `burst` tokens, full at
 * first, one taken per request, refilled at `events` per `interval`.
 */
class TokenBucket implements Limiter {
  private readonly events: number;
  private readonly interval: number;
  private readonly burst: number;
  private tokens: number;
  private last: number;
  constructor(events: number, interval: number, burst: number, now: number) {
    this.events = events;
    this.interval = interval;
    this.burst = burst;
    this.tokens = burst;
    this.last = now;
  }
  idleSince(now: number): number {
    return now - this.last;
  }
  allow(now: number): boolean {
    const refill = (Math.max(0, now - this.last) * this.events) / this.interval;
    this.tokens = Math.min(this.burst, this.tokens + refill);
    this.last = Math.max(this.last, now);
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return true;
    }
    return false;
  }
}

export class RateLimits {
  private readonly perKey = new Map<string, Limiter>();
  private readonly email: IntervalLimiter;
  private readonly sms: IntervalLimiter;
  private readonly config: Config["auth"]["rateLimit"];
  private readonly clock: () => number;
  constructor(config: Config["auth"]["rateLimit"], clock: () => number = () => Date.now()) {
    this.config = config;
    this.clock = clock;
    this.email = new IntervalLimiter(config.emailSent, HOUR, clock());
    this.sms = new IntervalLimiter(config.smsSent, HOUR, clock());
  }

  /** Counts the request against `bucket` for its client; 429 once the window's count is spent. */
  check(bucket: Bucket, request: Request): void {
    const key = `${bucket}:${clientIp(request)}`;
    let limiter = this.perKey.get(key);
    if (!limiter) {
      // Many client addresses: forget the ones whose windows have all passed (memory stays bounded).
      if (this.perKey.size >= 10_000) this.prune();
      limiter = this.newLimiter(bucket);
      this.perKey.set(key, limiter);
    }
    if (!limiter.allow(this.clock())) throw authError("requestRateLimit");
  }

  /** One more email out of email_sent per hour, or 429 over_email_send_rate_limit. */
  checkEmail(): void {
    if (!this.email.allow(this.clock())) throw authError("emailRateLimit");
  }

  /** One more SMS out of sms_sent per hour, or 429 over_sms_send_rate_limit. */
  checkSms(): void {
    if (!this.sms.allow(this.clock())) throw authError("smsRateLimit");
  }

  private prune(): void {
    const now = this.clock();
    for (const [key, limiter] of this.perKey) {
      if (limiter.idleSince(now) >= HOUR) this.perKey.delete(key);
    }
  }

  private newLimiter(bucket: Bucket): Limiter {
    const bucketShape = TOKEN_BUCKETS[bucket];
    return bucketShape
      ? new TokenBucket(this.limitOf(bucket), WINDOWS[bucket], bucketShape.burst, this.clock())
      : new IntervalLimiter(this.limitOf(bucket), WINDOWS[bucket], this.clock());
  }

  private limitOf(bucket: Bucket): number {
    switch (bucket) {
      case "sign_in_sign_ups":
        return this.config.signInSignUps;
      case "token_refresh":
        return this.config.tokenRefresh;
      case "token_verifications":
        return this.config.tokenVerifications;
      case "anonymous_users":
        return this.config.anonymousUsers;
      case "mfa_challenge":
      case "mfa_verify":
        return this.config.mfaChallengeAndVerify;
      case "passkey":
        return this.config.passkey;
    }
  }
}
