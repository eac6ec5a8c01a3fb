// Who is calling, by the name the event log gives them (ownerOf: a login user's name, else the
// api_token and its client): what per-user state, the favourite DAGs, is kept under. A change has
// passed requireToken already; a read (open on loopback) is identified when it presents a bearer
// token, which is then checked as a change's is (401/403 for a bad one), and is nobody without.
import type { Request, Response } from "express";
import { coerceError } from "../errors.ts";
import { ownerOf } from "./audit.ts";
import { type Authenticator, userOf } from "./auth.ts";

export async function callerName(auth: Authenticator, req: Request, res: Response): Promise<string | undefined> {
  if (userOf(res.locals) === undefined) {
    const header = req.headers.authorization;
    if (header === undefined || !/^Bearer[ ]/i.test(header)) return undefined;
    await new Promise<void>((resolve, reject) => {
      auth.requireToken()(req, res, (err?: unknown) => (err === undefined ? resolve() : reject(coerceError(err))));
    });
  }
  return ownerOf(req, res);
}
