// Airflow's *_pattern query parameters (dag_id_pattern, filename_pattern), matched in memory.

/** Case-insensitive substring, % any run of characters, _ one character, | for or; absent or "~" matches all. */
export function patternMatcher(pattern: string | undefined): (text: string) => boolean {
  if (pattern === undefined || pattern === "~") return () => true;
  const alternatives = pattern.split("|").map((part) => {
    const escaped = part.replace(/[.*+?^${}()[\]\\]/g, "\\$&").replace(/%/g, ".*").replace(/_/g, ".");
    return new RegExp(escaped, "i");
  });
  return (text) => alternatives.some((re) => re.test(text));
}
