// Wrong passwords at POST /auth/token are counted per user name and per client address
// (rate-limiter-flexible): after `per_user` failures for one name, or `per_address` from one address,
// within `window_seconds`, every login for that name or from that address answers 429 with
// Retry-After until the window ends, the right password included (so guessing cannot go on).
// A successful login clears its user's count. Airflow's FAB login is rate-limited the same way.
//
// On the stand the counts live in the runner's Postgres (table runner.login_throttle), so every
// runner of a pool counts the same guesses; if Postgres does not answer, each process counts in
// memory meanwhile (the library's insurance limiter). Tests of the API alone use memory only.
import type { Response } from "express";
import type pg from "pg";
import type { Authenticator } from "./auth.ts";
import { ApiProblem } from "./problem.ts";
import { RateLimiterMemory, RateLimiterPostgres, RateLimiterRes, type RateLimiterAbstract } from "rate-limiter-flexible";

export interface LoginThrottleConfig {
  per_user: number;
  per_address: number;
  window_seconds: number;
}

export const DEFAULT_LOGIN_THROTTLE: LoginThrottleConfig = { per_user: 10, per_address: 30, window_seconds: 300 };

export interface Refusal {
  /** Which count is spent: the user name's or the client address's. */
  by: "user" | "address";
  retryAfterSeconds: number;
}

export class LoginThrottle {
  private constructor(
    private readonly byUser: RateLimiterAbstract,
    private readonly byAddress: RateLimiterAbstract,
    readonly config: LoginThrottleConfig,
  ) {}

  /** Counts in this process's memory (an API without a database, tests). */
  static inMemory(config: LoginThrottleConfig = DEFAULT_LOGIN_THROTTLE): LoginThrottle {
    const limiter = (keyPrefix: string, points: number): RateLimiterMemory => new RateLimiterMemory({ keyPrefix, points, duration: config.window_seconds });
    return new LoginThrottle(limiter("login_user", config.per_user), limiter("login_address", config.per_address), config);
  }

  /**
   * Counts in Postgres (table runner.login_throttle, made by the runner's migration 16), shared by
   * every runner on that database. Refuses when the table is missing: the library would fall back to
   * its in-memory count on every call, and a pool would count guesses per process without a word.
   */
  static async inPostgres(pool: pg.Pool, config: LoginThrottleConfig = DEFAULT_LOGIN_THROTTLE): Promise<LoginThrottle> {
    const { rows } = await pool.query<{ table: string | null }>("select to_regclass('runner.login_throttle')::text as table");
    if (!rows[0]?.table) {
      throw new Error(
        "login throttle: table runner.login_throttle is missing from the runner's database; " +
          "the runner's migrations make it (src/runner/migrations/000016_login_throttle.sql): start the runner once (make up) before counting logins",
      );
    }
    const limiter = (keyPrefix: string, points: number): RateLimiterPostgres =>
      new RateLimiterPostgres({
        storeClient: pool,
        storeType: "pool",
        schemaName: "runner",
        tableName: "login_throttle",
        tableCreated: true,
        keyPrefix,
        points,
        duration: config.window_seconds,
        clearExpiredByTimeout: true,
        insuranceLimiter: new RateLimiterMemory({ keyPrefix, points, duration: config.window_seconds }),
      });
    return new LoginThrottle(limiter("login_user", config.per_user), limiter("login_address", config.per_address), config);
  }

  /** Undefined when a login of `user` from `address` may be tried now; else which count refuses it and for how long. */
  async refusal(user: string, address: string): Promise<Refusal | undefined> {
    const [u, a] = await Promise.all([this.byUser.get(key(user)), this.byAddress.get(address)]);
    if (u && u.consumedPoints >= this.config.per_user) return { by: "user", retryAfterSeconds: seconds(u) };
    if (a && a.consumedPoints >= this.config.per_address) return { by: "address", retryAfterSeconds: seconds(a) };
    return undefined;
  }

  /** A wrong password: one more for the name and for the address. */
  async failed(user: string, address: string): Promise<void> {
    await Promise.all([spend(this.byUser, key(user)), spend(this.byAddress, address)]);
  }

  /** A right password: the name's count starts again (the address's does not: other names may be guessed from it). */
  async succeeded(user: string): Promise<void> {
    await this.byUser.delete(key(user));
  }

  /**
   * One password check under the throttle, as every login route uses it (POST /auth/token, Basic
   * beyond loopback): 429 with Retry-After while the name or the address is held; otherwise the
   * user whose password matches (its name's count cleared), or undefined after counting the failure.
   */
  async check(auth: Authenticator, username: string, password: string, address: string, res: Response): Promise<string | undefined> {
    const refused = await this.refusal(username, address);
    if (refused) {
      res.setHeader("Retry-After", String(refused.retryAfterSeconds));
      const whose = refused.by === "user" ? `for user '${username.slice(0, 100)}'` : `from ${address}`;
      throw new ApiProblem(429, `too many wrong passwords ${whose}: logins are refused for ${refused.retryAfterSeconds} s more`, { field: refused.by === "user" ? "username" : undefined });
    }
    const user = auth.checkPassword(username, password);
    if (user === undefined) await this.failed(username, address);
    else await this.succeeded(user);
    return user;
  }
}

/** Names are compared as typed, bounded in length (the login body allows 200 characters). */
function key(user: string): string {
  return user.slice(0, 200);
}

function seconds(res: RateLimiterRes): number {
  return Math.max(1, Math.ceil(res.msBeforeNext / 1000));
}

/** consume() rejects with a RateLimiterRes once the points are spent: that is the count reaching its limit, not an error. */
async function spend(limiter: RateLimiterAbstract, k: string): Promise<void> {
  try {
    await limiter.consume(k);
  } catch (err) {
    if (!(err instanceof RateLimiterRes)) throw err;
  }
}
