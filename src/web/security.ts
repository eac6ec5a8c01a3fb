// Headers on every web response (a strict Content-Security-Policy: scripts and styles only from
// /ui/static, no inline script or style, no framing), and the guard on page actions: the
// browser must prove the request comes from a page of this same origin, addressed by IP or
// localhost. That stops cross-site requests (CSRF) and DNS rebinding; the bearer token never
// reaches the browser. See docs/web.md.
import { isIP } from "node:net";
import type { Request, RequestHandler } from "express";
import { ApiProblem } from "../api/index.ts";

export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join("; ");

export function webSecurityHeaders(): RequestHandler {
  return (_req, res, next) => {
    res.setHeader("Content-Security-Policy", CONTENT_SECURITY_POLICY);
    res.setHeader("X-Content-Type-Options", "nosniff");
    res.setHeader("X-Frame-Options", "DENY");
    res.setHeader("Referrer-Policy", "same-origin");
    res.setHeader("Cache-Control", "no-store");
    next();
  };
}

const USE_THE_API = "use the REST API with the bearer token from scripts and other tools";

/** The Host header's name without port or brackets; undefined when it is missing or malformed. */
export function hostNameOf(hostHeader: string | undefined): string | undefined {
  if (!hostHeader) return undefined;
  try {
    return new URL(`http://${hostHeader}`).hostname.replace(/^\[(.*)\]$/, "$1");
  } catch {
    // a Host header that is no host: treated as absent (the request is refused as off-host)
    return undefined;
  }
}

/** A name DNS rebinding cannot point at us: an IP literal, or localhost (browsers resolve it locally). */
export function isRebindingSafeHost(hostname: string): boolean {
  return isIP(hostname) !== 0 || hostname === "localhost";
}

function refuse(reason: string, field: string): ApiProblem {
  return new ApiProblem(403, `page actions are taken only from this runner's own pages: ${reason}; ${USE_THE_API}`, { field });
}

function checkSameOrigin(req: Request): void {
  const hostname = hostNameOf(req.headers.host);
  if (hostname === undefined || !isRebindingSafeHost(hostname)) {
    throw refuse(`open the pages by IP address or localhost (the Host header was '${req.headers.host ?? ""}')`, "Host");
  }
  const origin = req.headers.origin;
  const expected = `${req.protocol}://${req.headers.host}`;
  if (origin === undefined) throw refuse("the request has no Origin header", "Origin");
  if (origin !== expected) throw refuse(`Origin '${origin}' is not '${expected}'`, "Origin");
  const site = req.headers["sec-fetch-site"];
  if (site !== undefined && site !== "same-origin") throw refuse(`Sec-Fetch-Site is '${String(site)}'`, "Sec-Fetch-Site");
  // a cross-site form cannot send JSON without a CORS preflight, which this server never grants
  if (!req.is("application/json")) {
    throw new ApiProblem(415, "page actions take a JSON body (Content-Type: application/json)", { field: "body" });
  }
}

export function requireSameOriginPage(): RequestHandler {
  return (req, _res, next) => {
    try {
      checkSameOrigin(req);
      next();
    } catch (err) {
      next(err);
    }
  };
}
