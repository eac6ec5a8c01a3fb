// Favourite DAGs per caller (POST …/favorite and …/unfavorite, is_favorite on GET /dags and a DAG's
// details, the is_favorite filter; 409 twice either way, as Airflow 3; a DAG's delete takes its
// favourites) and a task group's PATCH and dry run: a group is the run's task instances named
// `{group_id}.…` (nested groups too), never a task that merely starts with the same letters.
import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import type { DagRunResponse } from "../../src/api/schemas.ts";
import { TEST_LOGIN, TEST_USER, auth, call, problemText, startApi, type ApiHarness } from "../../testkit/runner/api-app.ts";
import { apiGrouped, taskHolds, testDags } from "../../testkit/runner/api-dags.ts";
import { useTestRunner, waitForTaskState, withClient } from "../../testkit/runner/runner-db.ts";

type Dags = { dags: { dag_id: string; is_favorite: boolean }[]; total_entries: number };
type Tis = { task_instances: { task_id: string; state: string | null; note: string | null }[]; total_entries: number };
type Events = { event_logs: { event: string; owner: string | null; dag_id: string | null; run_id: string | null; task_id: string | null; extra: string | null }[] };

const SECOND_USER = TEST_LOGIN.users.find((u) => u.username !== TEST_USER.username);

void describe("favourite DAGs per caller, and task group patches", () => {
  let api: ApiHarness;
  const engine = useTestRunner([...testDags, apiGrouped], { beforeStop: () => api?.close() });
  const as: Record<"tester" | "second", Record<string, string>> = { tester: {}, second: {} };
  const cli = { ...auth, "X-Runner-Client": "cli" };

  const favourites = async (headers: Record<string, string>, value = "true") => {
    const res = await call<Dags>(api.baseUrl, "GET", `/api/v2/dags?is_favorite=${value}`, { headers });
    assert.equal(res.status, 200, res.text);
    return res.body.dags.map((d) => d.dag_id);
  };
  const detailsFavourite = async (headers: Record<string, string>, dagId = "api_ok") => {
    const res = await call<{ is_favorite: boolean }>(api.baseUrl, "GET", `/api/v2/dags/${dagId}/details`, { headers });
    assert.equal(res.status, 200, res.text);
    return res.body.is_favorite;
  };
  const mark = (action: "favorite" | "unfavorite", dagId: string, headers: Record<string, string>) => call(api.baseUrl, "POST", `/api/v2/dags/${dagId}/${action}`, { headers });

  before(async () => {
    api = await startApi(engine.runner);
    assert.ok(SECOND_USER, "the test login has a second user");
    for (const [name, user] of [["tester", TEST_USER], ["second", SECOND_USER]] as const) {
      const login = await call<{ access_token: string }>(api.baseUrl, "POST", "/auth/token", { body: user });
      assert.equal(login.status, 201, login.text);
      as[name] = { Authorization: `Bearer ${login.body.access_token}` };
    }
  });

  void it("keeps favourites per user: the filter and is_favorite say each caller's own", async () => {
    assert.equal((await mark("favorite", "api_ok", as.tester)).status, 204);
    assert.deepEqual(await favourites(as.tester), ["api_ok"]);
    assert.deepEqual(await favourites(as.second), [], "another user's favourite is not mine");
    assert.deepEqual(await favourites({}), [], "a read without a token is nobody's");
    assert.deepEqual(await favourites(as.tester, "false"), ["api_fail", "api_grouped", "api_slow"]);
    assert.deepEqual((await favourites(as.second, "false")).length, 4);
    assert.equal(await detailsFavourite(as.tester), true);
    assert.equal(await detailsFavourite(as.second), false);
    assert.equal(await detailsFavourite({}), false);
    const listed = await call<Dags>(api.baseUrl, "GET", "/api/v2/dags", { headers: as.tester });
    assert.deepEqual(listed.body.dags.filter((d) => d.is_favorite).map((d) => d.dag_id), ["api_ok"], "each listed DAG says it too");
    const one = await call<{ is_favorite: boolean }>(api.baseUrl, "GET", "/api/v2/dags/api_ok", { headers: as.second });
    assert.equal(one.body.is_favorite, false);

    // the api_token is one caller per X-Runner-Client, as the event log names it
    assert.equal((await mark("favorite", "api_slow", cli)).status, 204);
    assert.deepEqual(await favourites(cli), ["api_slow"]);
    assert.deepEqual(await favourites(auth), [], "the plain api_token is another caller than the CLI's");
    assert.deepEqual(await favourites(as.tester), ["api_ok"]);
    assert.equal((await mark("favorite", "api_slow", as.second)).status, 204, "a DAG may be several users' favourite");
    assert.deepEqual(await favourites(as.second), ["api_slow"]);
    const paused = await call<Dags>(api.baseUrl, "PATCH", "/api/v2/dags?dag_id_pattern=api_slow", { headers: as.second, body: { is_paused: false } });
    assert.deepEqual(paused.body.dags.map((d) => [d.dag_id, d.is_favorite]), [["api_slow", true]], "a change's answer says it for its caller");
  });

  void it("answers 409 for favouriting twice and for unfavouriting a DAG that is not one, 404 for an unknown DAG", async () => {
    const twice = await mark("favorite", "api_ok", as.tester);
    assert.equal(twice.status, 409, twice.text);
    assert.match(problemText(twice.body), /api_ok.*already a favourite of tester/);
    const notMine = await mark("unfavorite", "api_ok", as.second);
    assert.equal(notMine.status, 409, notMine.text);
    assert.match(problemText(notMine.body), /not marked as favourite by second/);
    assert.equal(await detailsFavourite(as.tester), true, "the other user's refused call changed nothing");
    assert.equal((await mark("unfavorite", "api_ok", as.tester)).status, 204);
    assert.deepEqual(await favourites(as.tester), []);
    assert.equal((await mark("unfavorite", "api_ok", as.tester)).status, 409, "unfavouriting again");
    for (const action of ["favorite", "unfavorite"] as const) {
      const unknown = await mark(action, "no_such_dag", as.tester);
      assert.equal(unknown.status, 404, unknown.text);
      assert.match(problemText(unknown.body), /no_such_dag/);
      assert.equal((await mark(action, "api_ok", {})).status, 401, "a change needs credentials");
      const badId = await mark(action, "bad%20id", as.tester);
      assert.equal(badId.status, 400, badId.text);
      assert.match(problemText(badId.body), /dag_id/);
    }
    const wrongToken = await call(api.baseUrl, "GET", "/api/v2/dags?is_favorite=true", { headers: { Authorization: "Bearer not-the-token" } });
    assert.equal(wrongToken.status, 403, "a read that names a caller is checked as a change is");
    const badFilter = await call(api.baseUrl, "GET", "/api/v2/dags?is_favorite=maybe", { headers: as.tester });
    assert.equal(badFilter.status, 422, badFilter.text);
    assert.match(problemText(badFilter.body), /is_favorite/);
  });

  void it("writes favourite and unfavourite to the event log with the caller and the DAG", async () => {
    const res = await call<Events>(api.baseUrl, "GET", "/api/v2/eventLogs?included_events=favorite_dag&included_events=unfavorite_dag&order_by=id&limit=100");
    assert.equal(res.status, 200, res.text);
    const seen = res.body.event_logs.map((e) => `${e.event} ${e.owner ?? "-"} ${e.dag_id ?? "-"}`);
    assert.deepEqual(seen, [
      "favorite_dag tester api_ok",
      "favorite_dag api_token (cli) api_slow",
      "favorite_dag second api_slow",
      "unfavorite_dag tester api_ok",
    ], "refused calls are not changes");
  });

  void it("takes a deleted DAG's favourites with it, every user's", async () => {
    assert.equal((await mark("favorite", "api_fail", as.tester)).status, 204);
    assert.equal((await mark("favorite", "api_fail", as.second)).status, 204);
    const deleted = await call(api.baseUrl, "DELETE", "/api/v2/dags/api_fail", { headers: as.tester });
    assert.equal(deleted.status, 200, deleted.text);
    assert.deepEqual(await favourites(as.tester), []);
    assert.deepEqual(await favourites(as.second), ["api_slow"], "another DAG's favourite stays");
    const rows = await withClient(engine.db, (client) => client.query<{ n: number }>("select count(*)::int as n from runner.dag_favorites where dag_id = 'api_fail'"));
    assert.equal(rows.rows[0]?.n, 0);
    assert.equal(await detailsFavourite(as.tester, "api_fail"), false, "its file is still there: listed again, nobody's favourite");
    assert.equal((await mark("favorite", "api_fail", as.tester)).status, 204, "and it can be marked anew");
  });

  void it("patches a task group: exactly its tasks (nested ones too), the dry run first changing nothing", async () => {
    const made = await call<DagRunResponse>(api.baseUrl, "POST", "/api/v2/dags/api_grouped/dagRuns", { headers: as.tester, body: { logical_date: null, conf: { hold: true } } });
    assert.equal(made.status, 200, made.text);
    const runId = made.body.dag_run_id;
    const base = `/api/v2/dags/api_grouped/dagRuns/${runId}/taskGroupInstances`;
    await waitForTaskState(engine.runner, "api_grouped", runId, "start", "running");
    const statesNow = async () => Object.fromEntries((await engine.runner.listTaskInstances("api_grouped", runId)).map((ti) => [ti.taskId, ti.state]));
    const before = await statesNow();

    const dry = await call<Tis>(api.baseUrl, "PATCH", `${base}/grp/dry_run`, { headers: as.tester, body: { new_state: "success", note: "would be" } });
    assert.equal(dry.status, 200, dry.text);
    assert.deepEqual(dry.body.task_instances.map((t) => t.task_id), ["grp.a", "grp.inner.b"], "not grpX.a, not start or end");
    assert.equal(dry.body.total_entries, 2);
    assert.ok(dry.body.task_instances.every((t) => t.state === "scheduled" && t.note === null), "listed as they are now");
    const nested = await call<Tis>(api.baseUrl, "PATCH", `${base}/grp.inner/dry_run`, { headers: as.tester, body: { new_state: "failed" } });
    assert.deepEqual(nested.body.task_instances.map((t) => t.task_id), ["grp.inner.b"], "a nested group");
    assert.deepEqual(await statesNow(), before, "a dry run changes nothing");

    const marked = await call<Tis>(api.baseUrl, "PATCH", `${base}/grp`, { headers: as.tester, body: { new_state: "success", note: "by group" } });
    assert.equal(marked.status, 200, marked.text);
    assert.deepEqual(marked.body.task_instances.map((t) => [t.task_id, t.state, t.note]), [["grp.a", "success", "by group"], ["grp.inner.b", "success", "by group"]]);
    const after = await statesNow();
    assert.deepEqual(after, { ...before, "grp.a": "success", "grp.inner.b": "success" }, "only the group's task instances changed");
    assert.equal(after["grpX.a"], "scheduled");

    const again = await call(api.baseUrl, "PATCH", `${base}/grp`, { headers: as.tester, body: { new_state: "success" } });
    assert.equal(again.status, 409, again.text);
    assert.match(problemText(again.body), /task group 'grp'.*success already/);
    const nothingLeft = await call<Tis>(api.baseUrl, "PATCH", `${base}/grp/dry_run`, { headers: as.tester, body: { new_state: "success" } });
    assert.deepEqual([nothingLeft.status, nothingLeft.body.total_entries], [200, 0], "nothing would change");
    const noteOnly = await call<Tis>(api.baseUrl, "PATCH", `${base}/grp?update_mask=note`, { headers: as.tester, body: { new_state: "failed", note: "second look" } });
    assert.equal(noteOnly.status, 200, noteOnly.text);
    assert.deepEqual(noteOnly.body.task_instances.map((t) => [t.task_id, t.state, t.note]), [["grp.a", "success", "second look"], ["grp.inner.b", "success", "second look"]], "update_mask=note leaves the state");

    taskHolds.release(`${runId}/start`);
    const ended = await engine.runner.waitForRun("api_grouped", runId, { timeoutMs: 20_000 });
    assert.equal(ended.state, "success", "the marked group let the run go on");
    const tries = Object.fromEntries((await engine.runner.listTaskInstances("api_grouped", runId)).map((ti) => [ti.taskId, ti.tryNumber]));
    assert.deepEqual([tries["grp.a"], tries["grp.inner.b"], tries["grpX.a"]], [0, 0, 1], "the group never ran; grpX.a did");

    const events = await call<Events>(api.baseUrl, "GET", `/api/v2/eventLogs?run_id=${encodeURIComponent(runId)}&event_pattern=task_group&limit=100`);
    assert.deepEqual(events.body.event_logs.map((e) => e.event).sort(), ["patch_task_group_instances", "patch_task_group_instances"], "the two changes, not the dry runs nor the refused one");
    const first = events.body.event_logs.find((e) => e.extra?.includes("by group"));
    assert.equal(first?.owner, TEST_USER.username);
    assert.equal(first?.dag_id, "api_grouped");
    assert.match(first?.extra ?? "", /"group_id":"grp"/);
  });

  void it("answers 404 naming the group, the run or the DAG, and 422/400 naming the field of a bad call", async () => {
    const runId = (await engine.runner.listRuns("api_grouped", { limit: 1, offset: 0 })).items[0]?.runId ?? "";
    assert.notEqual(runId, "", "the run the test before made");
    const base = `/api/v2/dags/api_grouped/dagRuns/${runId}/taskGroupInstances`;
    for (const suffix of ["", "/dry_run"]) {
      for (const group of ["nope", "gr", "grp.a"]) {
        const res = await call(api.baseUrl, "PATCH", `${base}/${group}${suffix}`, { headers: as.tester, body: { new_state: "success" } });
        assert.equal(res.status, 404, `${group}${suffix}: ${res.text}`);
        assert.match(problemText(res.body), new RegExp(`task group '${group.replace(".", "\\.")}'`));
      }
      const noRun = await call(api.baseUrl, "PATCH", `/api/v2/dags/api_grouped/dagRuns/no_such_run/taskGroupInstances/grp${suffix}`, { headers: as.tester, body: { note: "x" } });
      assert.equal(noRun.status, 404, noRun.text);
      assert.match(problemText(noRun.body), /no_such_run/);
      const noDag = await call(api.baseUrl, "PATCH", `/api/v2/dags/no_such_dag/dagRuns/${runId}/taskGroupInstances/grp${suffix}`, { headers: as.tester, body: { note: "x" } });
      assert.equal(noDag.status, 404, noDag.text);
      const bad: [unknown, RegExp][] = [
        [{ new_state: "running" }, /new_state/],
        [{ new_state: "success", include_downstream: true }, /include_downstream/],
        [{ note: 5 }, /note/],
        [{ colour: "red" }, /colour/],
      ];
      for (const [body, field] of bad) {
        const res = await call(api.baseUrl, "PATCH", `${base}/grp${suffix}`, { headers: as.tester, body });
        assert.equal(res.status, 422, `${JSON.stringify(body)}: ${res.text}`);
        assert.match(problemText(res.body), field);
      }
      const badGroup = await call(api.baseUrl, "PATCH", `${base}/bad%20group${suffix}`, { headers: as.tester, body: { note: "x" } });
      assert.equal(badGroup.status, 400, badGroup.text);
      assert.match(problemText(badGroup.body), /group_id/);
      assert.equal((await call(api.baseUrl, "PATCH", `${base}/grp${suffix}`, { body: { note: "x" } })).status, 401);
    }
    const badMask = await call(api.baseUrl, "PATCH", `${base}/grp?update_mask=colour`, { headers: as.tester, body: { note: "x" } });
    assert.equal(badMask.status, 422, badMask.text);
    assert.match(problemText(badMask.body), /update_mask/);
    const maskOnDry = await call(api.baseUrl, "PATCH", `${base}/grp/dry_run?update_mask=note`, { headers: as.tester, body: { note: "x" } });
    assert.equal(maskOnDry.status, 422, "Airflow's dry run takes no update_mask");
    assert.match(problemText(maskOnDry.body), /update_mask/);
  });
});
