// What the CLI prints of an API error: the problem's detail when it is a sentence, each named field
// of a 422 (FastAPI's detail list, or our problem JSON's errors), else its title or the raw text.
import assert from "node:assert/strict";
import { test } from "node:test";
import { problemDetail } from "../../src/cli/client.ts";

test("a 422 names each field and what is wrong with it", () => {
  const body = {
    type: "about:blank",
    title: "Unprocessable Entity",
    status: 422,
    detail: [{ loc: ["body", "conf", "days"], msg: "Too big: expected number to be <=7", type: "value_error" }],
    errors: [{ field: "conf.days", message: "Too big: expected number to be <=7" }],
  };
  assert.equal(problemDetail(JSON.stringify(body), "?"), "conf.days: Too big: expected number to be <=7");
  const fastApiOnly = { detail: body.detail, title: "Unprocessable Entity" };
  assert.equal(problemDetail(JSON.stringify(fastApiOnly), "?"), "body.conf.days: Too big: expected number to be <=7");
});

test("a sentence detail is shown as it is; no JSON shows the text; nothing shows the fallback", () => {
  assert.equal(problemDetail(JSON.stringify({ detail: "DAG 'x' not found", title: "Not Found" }), "?"), "DAG 'x' not found");
  assert.equal(problemDetail("<html>bad gateway</html>", "?"), "<html>bad gateway</html>");
  assert.equal(problemDetail("", "502 Bad Gateway"), "502 Bad Gateway");
});
