// A test reporter that prints each test file's time, slowest first: the sum of its top-level
// tests and suites (a file runs them one after another). Used by scripts/test.mjs when
// SVC_TEST_TIMINGS names a file; the spec reporter's output is unchanged.
export default async function* fileTimings(source) {
  const files = new Map();
  for await (const event of source) {
    if ((event.type === 'test:pass' || event.type === 'test:fail') && event.data.nesting === 0 && event.data.file) {
      const f = files.get(event.data.file) ?? { ms: 0, tests: 0 };
      f.ms += event.data.details.duration_ms ?? 0;
      f.tests += 1;
      files.set(event.data.file, f);
    }
  }
  const rows = [...files].sort((a, b) => b[1].ms - a[1].ms);
  const total = rows.reduce((s, [, f]) => s + f.ms, 0);
  const atOnce = process.env.SVC_TEST_CONCURRENCY ?? 3;
  yield `# ${rows.length} files, ${(total / 1000).toFixed(1)} s of file time (files run ${atOnce} at once)\n`;
  for (const [file, f] of rows) {
    yield `${(f.ms / 1000).toFixed(1).padStart(7)} s  ${file.replace(/^.*\/dist\//, '')}\n`;
  }
}
