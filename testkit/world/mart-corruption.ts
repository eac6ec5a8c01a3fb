// A corrupted mart row, made and undone the way a DQ test needs it: a new version of the first
// dm.daily_revenue row of `date` with `delta` added to its revenue, under a load id of the test's
// own (the committed-version view shows it; writing the opposite delta puts the value back).
import { withClickHouse } from "./rest-world.ts";

export function rewriteDailyRevenue(date: string, delta: string, loadId: string): Promise<void> {
  return withClickHouse((ch) =>
    ch.command(
      `INSERT INTO dm.daily_revenue_dist (report_date, category, orders, units, revenue, aov, _version, _load_id, _load_ts)
       SELECT report_date, category, orders, units, revenue + ${delta}, aov, _version + 1, '${loadId}', _load_ts
         FROM dm.daily_revenue_v WHERE report_date = toDate('${date}') ORDER BY category LIMIT 1`,
      { insert_distributed_sync: 1 },
    ),
  );
}
