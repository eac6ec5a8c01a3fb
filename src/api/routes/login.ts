// Login as Airflow's simple auth manager: POST /auth/token (JSON or form) and /auth/token/cli (what
// airflowctl calls) take {username, password} and answer 201 {access_token}, a signed JWT with an
// expiry; bad credentials are 401. Users and the signing key are runner.auth in stand.yaml. Too many
// wrong passwords for a name or from an address are 429 with Retry-After (src/api/login-throttle.ts).
import type { ApiContext } from "../context.ts";
import { ApiProblem } from "../problem.ts";
import { defineRoute, type RouteSpec } from "../route.ts";
import { loginBody, loginResponse } from "../schemas.ts";

export function loginRoutes({ auth, loginThrottle, runner, logger }: ApiContext): RouteSpec[] {
  const login = (path: string, operationId: string, summary: string, formBody: boolean): RouteSpec =>
    defineRoute({
      method: "post",
      path,
      operationId,
      summary,
      description:
        "Airflow's simple auth manager login. The token goes in 'Authorization: Bearer <access_token>' on calls that change " +
        "state; it expires after runner.auth.token_ttl_seconds. Bad credentials are 401. After runner.auth.login_throttle.per_user " +
        "wrong passwords for one user name, or per_address from one client address, within window_seconds, every login for that " +
        "name or from that address is 429 with Retry-After until the window ends.",
      tag: "Login",
      auth: false,
      formBody,
      body: loginBody,
      bodySchemaName: "LoginBody",
      responses: {
        201: { description: "A signed JWT", schema: loginResponse, schemaName: "LoginResponse" },
        401: { description: "Unknown user or wrong password, or no login configured" },
        429: { description: "Too many wrong passwords for this user name or from this address: Retry-After says when to try again" },
      },
      async handle({ body, req, res }) {
        if (!auth.loginEnabled) {
          throw new ApiProblem(401, "this runner has no users: add runner.auth (users, jwt_secret) to the stand config", { field: "username" });
        }
        const user = await loginThrottle.check(auth, body.username, body.password, req.socket.remoteAddress ?? "unknown", res);
        if (user === undefined) {
          // a wrong password is part of the audit trail too (a right one is recorded as the route's event)
          try {
            await runner.recordEvent({ event: "login_failed", owner: body.username.slice(0, 200), dagId: null, taskId: null, runId: null, extra: JSON.stringify({ address: req.socket.remoteAddress ?? null, path: req.path }) });
          } catch (err) {
            logger.warn({ err }, "the event log did not take a failed login; the login was refused");
          }
          throw new ApiProblem(401, "invalid username or password", { field: "password" });
        }
        res.locals.user = user;
        res.status(201).json({ access_token: await auth.issueToken(user) });
      },
    });
  return [
    login("/auth/token", "create_token", "Log in: a JWT for the API", true),
    login("/auth/token/cli", "create_token_cli", "Log in for the CLI (airflowctl): a JWT for the API", false),
  ];
}
