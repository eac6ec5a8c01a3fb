// A runner that listens beyond loopback (runner.listen_host: 0.0.0.0 in a container, or another
// host's address) answers nobody without credentials: every route, reads and the web view included,
// needs 'Authorization: Bearer <api_token or login JWT>', or Basic with a runner.auth user (what a
// browser sends after its login prompt, for the web view). Only the login routes and the health
// route stay open (a load balancer's probe). Wrong Basic passwords count toward the login throttle.
// On loopback (the local stand) reads stay open as before: only this machine reaches them.
import type { RequestHandler } from "express";
import type { Authenticator } from "./auth.ts";
import type { LoginThrottle } from "./login-throttle.ts";
import { ApiProblem } from "./problem.ts";

/** Routes a client reaches before it has any credential. */
const OPEN_ROUTES = new Set(["POST /auth/token", "POST /auth/token/cli", "GET /api/v2/monitor/health"]);

export function requireCredentialsEverywhere(auth: Authenticator, throttle: LoginThrottle): RequestHandler {
  const bearer = auth.requireToken();
  return (req, res, next) => {
    if (OPEN_ROUTES.has(`${req.method} ${req.path}`)) {
      next();
      return;
    }
    const header = req.headers.authorization ?? "";
    const basic = /^Basic[ ]+([A-Za-z0-9+/=]+)\s*$/i.exec(header)?.[1];
    if (header === "") {
      // both ways are offered: a browser prompts for Basic, a client sends its Bearer token
      res.setHeader("WWW-Authenticate", ['Basic realm="runner", charset="UTF-8"', 'Bearer realm="runner"']);
      next(new ApiProblem(401, "this runner listens beyond loopback: every route needs 'Authorization: Bearer <token>' (runner.api_token or POST /auth/token) or Basic with a runner.auth user", { field: "Authorization" }));
      return;
    }
    if (basic === undefined) {
      bearer(req, res, next);
      return;
    }
    const decoded = Buffer.from(basic, "base64").toString("utf8");
    const colon = decoded.indexOf(":");
    const username = colon < 0 ? decoded : decoded.slice(0, colon);
    const password = colon < 0 ? "" : decoded.slice(colon + 1);
    void (async () => {
      const user = await throttle.check(auth, username, password, req.socket.remoteAddress ?? "unknown", res);
      if (user === undefined) {
        res.setHeader("WWW-Authenticate", 'Basic realm="runner", charset="UTF-8"');
        throw new ApiProblem(401, "invalid username or password (Basic)", { field: "Authorization" });
      }
      res.locals.user = user;
    })().then(() => next(), next);
  };
}
