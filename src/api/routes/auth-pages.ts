// GET /api/v2/auth/login and /logout: Airflow's hand-off to its auth manager's login page. This
// runner's auth manager is the token endpoint (POST /auth/token, as Airflow's simple auth manager),
// and its web view is read-only without a login, so login answers where and how to log in (and
// keeps `next` only when it is a path on this server: no open redirect); logout says what ending a
// session means for a stateless token.
import { z } from "zod";
import { ApiProblem } from "../problem.ts";
import { defineRoute, type RouteSpec } from "../route.ts";
import { blankIsAbsent } from "../schemas.ts";

const nextParam = z.preprocess(blankIsAbsent, z.string().max(2000).optional());

export function authPageRoutes(): RouteSpec[] {
  return [
    defineRoute({
      method: "get",
      path: "/api/v2/auth/login",
      operationId: "login",
      summary: "Where to log in",
      description:
        "POST /auth/token (or /auth/token/cli) with {username, password} answers a bearer token; this call names it, with the " +
        "`next` path to return to (a path on this server only: another origin is 400).",
      tag: "Login",
      auth: false,
      query: z.object({ next: nextParam }).strict(),
      responses: { 200: { description: "How to log in", schema: z.object({ token_url: z.string(), method: z.string(), body: z.array(z.string()), next: z.string().nullable() }) }, 400: { description: "next is not a path on this server" } },
      handle({ query, res }) {
        const next = query.next;
        if (next !== undefined && (!next.startsWith("/") || next.startsWith("//") || next.includes("\\"))) {
          throw new ApiProblem(400, `query parameter next: must be a path on this server (starting with one /), got '${next.slice(0, 100)}'`, { field: "next" });
        }
        res.json({ token_url: "/auth/token", method: "POST", body: ["username", "password"], next: next ?? null });
      },
    }),
    defineRoute({
      method: "get",
      path: "/api/v2/auth/logout",
      operationId: "logout",
      summary: "Log out",
      description: "Tokens are signed JWTs the runner does not keep: a session ends when its holder forgets the token or it expires (runner.auth.token_ttl_seconds). Nothing is stored to forget here.",
      tag: "Login",
      auth: false,
      responses: { 200: { description: "What logging out means here", schema: z.object({ detail: z.string() }) } },
      handle({ res }) {
        res.json({ detail: "logged out: forget your token; it expires after runner.auth.token_ttl_seconds (the runner keeps no sessions)" });
      },
    }),
  ];
}
