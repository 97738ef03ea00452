// Redaction time against input size on hostile shapes (long runs a backtracking pattern could
// rescan from every start). Linear patterns keep the time per megabyte flat as the size grows.
//   npx tsx bench/redact.ts [--sizes 65536,262144,1048576,4194304]
// Prints a table; never asserts anything.

import { parseArgs } from 'node:util';
import { redact } from '../src/core/capture/redact';

const { values } = parseArgs({ options: { sizes: { type: 'string', default: '65536,262144,1048576,4194304' } } });
const sizes = values.sizes.split(',').filter(Boolean).map(Number);

const shapes: Record<string, (n: number) => string> = {
  'a=': (n) => 'a='.repeat(n / 2),
  token: (n) => 'token'.repeat(n / 5),
  'token + spaces': (n) => `token${' '.repeat(n)}`,
  'password-x.': (n) => 'password-x.'.repeat(n / 11),
  'token=a.a.a(': (n) => `token=${'a.'.repeat(n / 2)}(`,
  'base64-ish': (n) => 'Aa0-_+/='.repeat(n / 8),
  'eyJ-': (n) => 'eyJ-'.repeat(n / 4),
  'a.b-c+': (n) => 'a.b-c+'.repeat(n / 6),
  "secret='": (n) => "secret='".repeat(n / 8),
  // Password hashes' shapes (the rule 'password hash'): prefixes without their hash, a scheme's run.
  '$2b$12$': (n) => '$2b$12$'.repeat(n / 7),
  '$6$rounds=1$': (n) => '$6$rounds=1$a'.repeat(n / 13),
  '$a$v=1$k=v$': (n) => '$a$v=1$k=v$'.repeat(n / 11),
  '{SSHA}run': (n) => `{SSHA}${'a'.repeat(n)}`,
  'u:13 chars': (n) => 'u:aB3dE5gH7jK9m\n'.repeat(n / 16),
};

console.log(['shape'.padEnd(16), ...sizes.map((s) => `${Math.round(s / 1024)} KiB`.padStart(12))].join(''));
for (const [name, make] of Object.entries(shapes)) {
  const cells = sizes.map((size) => {
    const text = make(size);
    const started = performance.now();
    redact(text);
    const ms = performance.now() - started;
    return `${((ms * 1024 * 1024) / text.length).toFixed(0)} ms/MB`.padStart(12);
  });
  console.log([name.padEnd(16), ...cells].join(''));
}
