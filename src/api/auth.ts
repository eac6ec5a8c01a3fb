// Bearer-token check for mutating routes: 401 when no token is presented, 403 when it is wrong.
// Tokens are compared as SHA-256 digests with timingSafeEqual, so neither length nor content leaks.
import { createHash, timingSafeEqual } from "node:crypto";
import type { RequestHandler } from "express";
import { ApiProblem } from "./problem.ts";

function digest(text: string): Buffer {
  return createHash("sha256").update(text, "utf8").digest();
}

export function tokensMatch(presented: string, expected: string): boolean {
  return timingSafeEqual(digest(presented), digest(expected));
}

export function requireBearerToken(expectedToken: string): RequestHandler {
  if (expectedToken.length === 0) throw new Error("the API token must not be empty");
  return (req, res, next) => {
    const header = req.headers.authorization;
    const match = header === undefined ? null : /^Bearer[ ]+(\S+)\s*$/i.exec(header);
    if (!match?.[1]) {
      res.setHeader("WWW-Authenticate", 'Bearer realm="runner"');
      next(
        new ApiProblem(
          401,
          header === undefined
            ? "this call changes state and needs 'Authorization: Bearer <runner.api_token>' (see stand.yaml)"
            : "the Authorization header must be 'Bearer <token>'",
          { field: "Authorization" },
        ),
      );
      return;
    }
    if (!tokensMatch(match[1], expectedToken)) {
      next(new ApiProblem(403, "the bearer token is not the runner's api_token", { field: "Authorization" }));
      return;
    }
    next();
  };
}
