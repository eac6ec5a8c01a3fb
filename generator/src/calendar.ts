// Model time. Day 0 is 2026-06-01 on the counter's clock (Europe/Samara, UTC+4, no DST), so a
// counter day D runs from 20:00 UTC of the calendar day before until 20:00 UTC of its own date.
// Formatting is hand-rolled because it runs once per event on the hot path.

export const START_DATE = "2026-06-01";
export const COUNTER_TIME_ZONE = "Europe/Samara";
export const COUNTER_UTC_OFFSET_SECONDS = 4 * 3600;
export const SECONDS_PER_DAY = 86_400;

const START_UTC_MS = Date.UTC(2026, 5, 1);

const PAD2: readonly string[] = Array.from({ length: 60 }, (_, i) => String(i).padStart(2, "0"));

/** The calendar date (YYYY-MM-DD) of counter day `day`. */
export function dayDate(day: number): string {
  return new Date(START_UTC_MS + day * SECONDS_PER_DAY * 1000).toISOString().slice(0, 10);
}

/** Day number of a YYYY-MM-DD date, the inverse of dayDate. */
export function dateDay(date: string): number {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(date)) throw new RangeError(`not a YYYY-MM-DD date: ${date}`);
  const ms = Date.parse(`${date}T00:00:00Z`);
  if (Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 10) !== date) throw new RangeError(`not a real date: ${date}`);
  return Math.round((ms - START_UTC_MS) / (SECONDS_PER_DAY * 1000));
}

/** Epoch milliseconds of the start of counter day `day` (20:00 UTC of the day before). */
export function dayStartUtcMs(day: number): number {
  return START_UTC_MS + day * SECONDS_PER_DAY * 1000 - COUNTER_UTC_OFFSET_SECONDS * 1000;
}

/** Weekday of a counter day, 0 = Monday (day 0 is a Monday). */
export function weekday(day: number): number {
  return ((day % 7) + 7) % 7;
}

/** Formats instants inside one counter day as YYYY-MM-DDTHH:MM:SSZ without building Date objects. */
export class DayClock {
  readonly date: string;
  private readonly utcDateBefore: string;

  constructor(readonly day: number) {
    this.date = dayDate(day);
    this.utcDateBefore = dayDate(day - 1);
  }

  /** UTC timestamp of `second` seconds after the counter day began (0 ≤ second < 86400). */
  utcTime(second: number): string {
    const utcSecond = second - COUNTER_UTC_OFFSET_SECONDS;
    const date = utcSecond < 0 ? this.utcDateBefore : this.date;
    const s = utcSecond < 0 ? utcSecond + SECONDS_PER_DAY : utcSecond;
    const hh = Math.floor(s / 3600);
    const mm = Math.floor((s % 3600) / 60);
    return `${date}T${PAD2[hh]}:${PAD2[mm]}:${PAD2[s % 60]}Z`;
  }
}

/** RFC 3339 UTC with exactly three fractional digits, as the order backend writes it. */
export function isoMillis(epochMs: number): string {
  return new Date(epochMs).toISOString();
}
