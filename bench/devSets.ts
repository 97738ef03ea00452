// The public development sets: the repository, its pinned HEAD and the questions file of each.
import * as path from 'node:path';

export const DEV_SETS = {
  yargs: { url: 'https://github.com/yargs/yargs.git', head: '2a4378bdc2eac9cf7d0cdfe0a52b1b25f779806a', queries: path.join(__dirname, 'eval', 'dev-queries.jsonl') },
  flask: { url: 'https://github.com/pallets/flask.git', head: '2ac89889f4cc330eabd50f295dcef02828522c69', queries: path.join(__dirname, 'eval', 'flask', 'dev-queries.jsonl') },
  express: { url: 'https://github.com/expressjs/express.git', head: 'a3714473feb3d2908add734d340e7755fd85e0a3', queries: path.join(__dirname, 'eval', 'express', 'dev-queries.jsonl') },
} as const;

export type SetName = keyof typeof DEV_SETS;
