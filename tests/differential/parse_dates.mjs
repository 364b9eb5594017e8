// Date.parse over a JSON array of strings (file given as argv[2]); prints a JSON array of epoch ms or null (NaN).
// Run with TZ=UTC: offset-less date-times are local time in JS, and the engine reads them as UTC.
import { readFileSync } from 'node:fs';

const inputs = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const answers = inputs.map((text) => {
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? null : ms;
});
process.stdout.write(JSON.stringify({ node: process.version, tz: process.env.TZ ?? null, answers }));
