// Who may change state: the runner's static api_token (make, the CLI) or a JWT from POST /auth/token
// (Airflow's simple auth manager: users and signing key from stand.yaml's runner.auth). No header is
// 401; a JWT that is expired, tampered or signed with another key is 401 (as Airflow answers); any
// other wrong token is 403. Secrets are compared as SHA-256 digests with timingSafeEqual.
import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import type { RequestHandler } from "express";
import { SignJWT, errors as joseErrors, jwtVerify } from "jose";
import { isLoopbackHost } from "../config/index.ts";
import { ApiProblem } from "./problem.ts";

export { isLoopbackHost };

export interface LoginConfig {
  /** HS256 signing key (runner.auth.jwt_secret). */
  jwtSecret: string;
  tokenTtlSeconds: number;
  users: readonly { username: string; password: string }[];
}

const ISSUER = "clickstream-stand-runner";
const AUDIENCE = "apache-airflow";
const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

function digest(text: string): Buffer {
  return createHash("sha256").update(text, "utf8").digest();
}

export function tokensMatch(presented: string, expected: string): boolean {
  return timingSafeEqual(digest(presented), digest(expected));
}

export class Authenticator {
  private readonly key: Uint8Array | undefined;

  constructor(
    private readonly staticToken: string,
    private readonly login: LoginConfig | undefined,
  ) {
    if (staticToken.length === 0) throw new Error("the API token must not be empty");
    this.key = login ? new TextEncoder().encode(login.jwtSecret) : undefined;
  }

  /** The user whose password matches, or undefined; every user is compared, so timing says nothing. */
  checkPassword(username: string, password: string): string | undefined {
    let found: string | undefined;
    for (const user of this.login?.users ?? []) {
      const nameOk = tokensMatch(username, user.username);
      const passwordOk = tokensMatch(password, user.password);
      if (nameOk && passwordOk) found = user.username;
    }
    return found;
  }

  get loginEnabled(): boolean {
    return this.key !== undefined;
  }

  async issueToken(username: string): Promise<string> {
    if (!this.key || !this.login) throw new Error("login is not configured (runner.auth)");
    return new SignJWT({ role: "admin" })
      .setProtectedHeader({ alg: "HS256", typ: "JWT" })
      .setSubject(username)
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setIssuedAt()
      .setNotBefore("0s")
      .setExpirationTime(`${this.login.tokenTtlSeconds}s`)
      .sign(this.key);
  }

  /** Signs a DAG file's location (Airflow's file_token). */
  fileToken(fileloc: string): string {
    return this.sign("file-token", fileloc);
  }

  /** The fileloc a file token names, or undefined when it was not signed here. */
  readFileToken(token: string): string | undefined {
    return this.readSigned("file-token", token);
  }

  /** base64url(text) "." HMAC-SHA256(purpose, text): a value the API hands out and takes back
   * (file tokens, log continuation tokens) that a client cannot forge or alter. */
  sign(purpose: string, text: string): string {
    const body = Buffer.from(text, "utf8").toString("base64url");
    return `${body}.${this.mac(purpose, body)}`;
  }

  /** The text of a token sign() made for this purpose, or undefined when it was not (or was changed). */
  readSigned(purpose: string, token: string): string | undefined {
    const [body, mac, ...rest] = token.split(".");
    if (!body || !mac || rest.length > 0) return undefined;
    return tokensMatch(mac, this.mac(purpose, body)) ? Buffer.from(body, "base64url").toString("utf8") : undefined;
  }

  private mac(purpose: string, body: string): string {
    return createHmac("sha256", this.login?.jwtSecret ?? this.staticToken)
      .update(`${purpose}:${body}`)
      .digest("base64url")
      .slice(0, 22);
  }

  /** The subject of a valid JWT; throws ApiProblem(401) naming why it is not valid. */
  async verifyJwt(token: string): Promise<string> {
    if (!this.key) throw new ApiProblem(401, "this runner has no login configured (runner.auth): use the api_token", { field: "Authorization" });
    try {
      const { payload } = await jwtVerify(token, this.key, { algorithms: ["HS256"], issuer: ISSUER, audience: AUDIENCE });
      if (typeof payload.sub !== "string" || payload.sub === "") throw new joseErrors.JWTClaimValidationFailed("no subject", payload, "sub");
      return payload.sub;
    } catch (err) {
      if (err instanceof ApiProblem) throw err;
      const reason = err instanceof joseErrors.JWTExpired ? "the token has expired: log in again (POST /auth/token)" : "the token is not valid (bad signature or claims)";
      throw new ApiProblem(401, reason, { field: "Authorization" });
    }
  }

  /** Express middleware for mutating routes; sets res.locals.user for a login token. */
  requireToken(): RequestHandler {
    return (req, res, next) => {
      const header = req.headers.authorization;
      const match = header === undefined ? null : /^Bearer[ ]+(\S+)\s*$/i.exec(header);
      const token = match?.[1];
      if (!token) {
        res.setHeader("WWW-Authenticate", 'Bearer realm="runner"');
        next(
          new ApiProblem(
            401,
            header === undefined
              ? "this call changes state and needs 'Authorization: Bearer <token>': runner.api_token (stand.yaml) or a token from POST /auth/token"
              : "the Authorization header must be 'Bearer <token>'",
            { field: "Authorization" },
          ),
        );
        return;
      }
      if (tokensMatch(token, this.staticToken)) {
        next();
        return;
      }
      if (!JWT_SHAPE.test(token)) {
        next(new ApiProblem(403, "the bearer token is not the runner's api_token", { field: "Authorization" }));
        return;
      }
      this.verifyJwt(token).then(
        (user) => {
          res.locals.user = user;
          next();
        },
        (err: unknown) => {
          res.setHeader("WWW-Authenticate", 'Bearer realm="runner", error="invalid_token"');
          next(err);
        },
      );
    };
  }
}

/** The login user of this request (a JWT's subject), when it presented one. */
export function userOf(locals: Record<string, unknown>): string | undefined {
  return typeof locals.user === "string" ? locals.user : undefined;
}

/** The shortest api_token a runner listening beyond loopback accepts (one a person would not guess). */
export const MIN_OPEN_TOKEN_LENGTH = 24;

/** A runner that listens beyond loopback needs a real secret: throws, naming the field, when it has none. */
export function assertOpenListenSecured(listenHost: string, apiToken: string): void {
  if (isLoopbackHost(listenHost)) return;
  if (apiToken.length < MIN_OPEN_TOKEN_LENGTH) {
    throw new Error(
      `runner.listen_host is ${listenHost}, beyond loopback, so every route needs a token; runner.api_token is ${apiToken.length} characters and ` +
        `must be at least ${MIN_OPEN_TOKEN_LENGTH} (a random one: openssl rand -hex 24). The runner does not start without one.`,
    );
  }
}
