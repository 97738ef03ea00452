// What every command is called, says in `--help` and accepts: loaded on every start, so it
// imports nothing but types and constants. The implementations live in the files beside it.

import { EVAL_TOOLS } from '../../core/eval/evalTools';
import type { CommandSpec } from '../command';

/** The optional second-stage reranker, for the commands that search. */
const RERANK_OPTIONS = {
  'rerank-endpoint': {
    type: 'string',
    description: 'Rerank the best hits of every search through this server\'s POST <url>/rerank (llama.cpp --reranking, vLLM, Infinity, LocalAI), e.g. http://127.0.0.1:8080/v1 (default: $CODE_MEMORY_RERANK_ENDPOINT; off when unset; API key from $CODE_MEMORY_RERANK_API_KEY)',
    valueName: 'url',
  },
  'rerank-model': { type: 'string', description: 'Reranker model name sent to the server (default: $CODE_MEMORY_RERANK_MODEL)', valueName: 'name' },
  'rerank-candidates': { type: 'string', description: 'Hits per search the reranker rescores, 2 to 100 (default: $CODE_MEMORY_RERANK_CANDIDATES or 30)', valueName: 'n' },
} as const;

export const mcpSpec: CommandSpec = {
  name: 'mcp',
  branch: true,
  summary: 'Serve the memory tools over MCP stdio (for Claude Code, Cursor, Codex...)',
  usage: 'code-memory mcp [--project <name>] [--store <uri>]',
  details:
    'Speaks MCP on stdin/stdout for one project (from --project, else the current folder\'s git remote or its name made unique). Logs go to stderr.\n' +
    'Example agent config: {"command": "code-memory", "args": ["mcp", "--project", "github.com/me/app"]}',
  options: { ...RERANK_OPTIONS },
};

export const serveSpec: CommandSpec = {
  name: 'serve',
  branch: true,
  summary: 'Serve MCP (Streamable HTTP) and REST on 127.0.0.1 with a bearer token',
  usage: 'code-memory serve [--port <n>] [--token-file <path>] [--project <name>] [--store <uri>]',
  details:
    'Listens on 127.0.0.1 only (a random free port unless --port). Every request needs Authorization: Bearer <token>.\n' +
    'The URL and token are written to a file readable only by you: the --token-file, else server.json in the store folder, or ~/.code-memory/server.json for a store on object storage (s3://, gs://, az://). It is removed on exit. ' +
    'A second server that would use the same file (on the same store, or on any store on object storage) needs a --token-file of its own: a file that names a running server is never taken over, nor is one no server wrote (a file of yours, a folder, a symlink: refused, left as it is).\n' +
    'Routes: POST /v1/mcp/memory (MCP), GET /v1/nodes/{id}, GET /v1/dev/mcp-requests, POST /v1/observations, GET /v1/health.',
  options: {
    port: { type: 'string', description: 'Port to listen on (default: a random free port)', valueName: 'n' },
    'token-file': { type: 'string', description: 'Where to write {url, token} (mode 0600)', valueName: 'path' },
    ...RERANK_OPTIONS,
  },
};

export const importGitSpec: CommandSpec = {
  name: 'import-git',
  branch: true,
  summary: "Backfill memory from a repository's commit history (idempotent)",
  usage: 'code-memory import-git [repo-path] [--rev <rev>] [--project <name>] [--store <uri>]',
  details:
    'One observation per commit (message, files, SHA, branch, author, date, what the diff changed), grouped into sessions by time. ' +
    'Commits already imported are skipped, so running it twice adds nothing. Progress goes to stderr.',
  positionals: 1,
  options: {
    rev: { type: 'string', description: 'Revision whose history is imported (default HEAD)', valueName: 'rev' },
    merges: {
      type: 'boolean',
      description:
        'Also import informative merges as observations of their own: merges with a message of their own (a "Merge pull request" subject, or a body) that bring in more than one commit. ' +
        'With it, a pull request\'s message is not folded into the commits it merged (by default it is)',
    },
  },
};

export const observeSpec: CommandSpec = {
  name: 'observe',
  branch: true,
  summary: 'Store observations given as JSON lines on stdin (for agent hooks)',
  usage: 'some-hook | code-memory observe [--project <name>] [--store <uri>]',
  details:
    'Each line is one observation: {"type": "edit", "title": "...", "files_modified": ["src/a.ts"], ...} (fields as in the `observe` MCP tool). ' +
    'All lines are checked first; if any is invalid nothing is stored and the exit code is 2.',
  options: {},
};

export const exportSpec: CommandSpec = {
  name: 'export',
  summary: 'Write the project memory (or all of it) as JSON lines',
  usage: 'code-memory export [--out <file>] [--all-projects | --project <name>] [--store <uri>]',
  options: {
    out: { type: 'string', description: 'File to write, readable only by you (mode 0600); default: stdout', valueName: 'file' },
    'all-projects': { type: 'boolean', description: 'Export every project in the store' },
  },
};

export const importSpec: CommandSpec = {
  name: 'import',
  summary: 'Read JSON lines written by `export` into the store',
  usage: 'code-memory import [file|-] [--project <name>] [--include-forgotten] [--store <uri>]',
  details:
    'The whole file is checked before anything is written: a bad line refuses it, with its line number (exit 2). Records already in the store are skipped, so a file imported twice adds nothing. ' +
    'With --project (or $CODE_MEMORY_PROJECT), only that project\'s records are imported; the others are counted and left out. ' +
    'Records forgotten since the export are left out and counted, unless --include-forgotten.',
  positionals: 1,
  options: {
    'include-forgotten': { type: 'boolean', description: 'Import the records forgotten since the export too (a restore)' },
  },
};

export const forgetSpec: CommandSpec = {
  name: 'forget',
  summary: 'Delete records: some ids, a whole project, or everything',
  usage: 'code-memory forget (--ids <1,2,3> --kind <observation|session_summary|memory> | --whole-project | --all) [--yes]',
  details: 'Deleted text is pruned from disk. --whole-project and --all ask for --yes.',
  options: {
    ids: { type: 'string', description: 'Comma-separated ids', valueName: 'ids' },
    kind: { type: 'string', description: 'Kind of the ids: observation, session_summary or memory', valueName: 'kind' },
    'whole-project': { type: 'boolean', description: 'Forget every record of the project' },
    all: { type: 'boolean', description: 'Forget everything in the store' },
    yes: { type: 'boolean', description: 'Confirm --whole-project or --all' },
  },
};

export const nodeSpec: CommandSpec = {
  name: 'node',
  branch: true,
  summary: 'Show a node (a recall result): its cell and source record',
  usage: 'code-memory node <node-id> [--project <name>] [--json]',
  positionals: 1,
  options: {},
};

export const searchSpec: CommandSpec = {
  name: 'search',
  branch: true,
  summary: 'Search the project memory (hybrid full text + vectors)',
  usage: 'code-memory search <text...> [--limit <n>] [--layer L0|L1|L2] [--json]',
  positionals: Infinity,
  options: {
    limit: { type: 'string', description: 'Results to show (default 10, at most 200)', valueName: 'n' },
    layer: { type: 'string', multiple: true, description: 'Only this layer (repeatable): L0 observations, L1 session summaries, L2 memories', valueName: 'layer' },
    ...RERANK_OPTIONS,
  },
};

export const statsSpec: CommandSpec = {
  name: 'stats',
  summary: 'Count records, projects and vectors in the store',
  usage: 'code-memory stats [--all-projects | --project <name>] [--json]',
  options: { 'all-projects': { type: 'boolean', description: 'Count every project in the store' } },
};

export const doctorSpec: CommandSpec = {
  name: 'doctor',
  summary: 'Check the store (and rebuild a damaged index from its rows), the embedding model, the reranker, the port and git; say what to fix',
  usage: 'code-memory doctor [--port <n>] [--store <uri>] [--embedder use-lite|hashed|openai|none] [--rerank-endpoint <url>] [--rebuild-meta] [--json]',
  options: {
    port: { type: 'string', description: 'Also check that this port is free on 127.0.0.1', valueName: 'n' },
    'rebuild-meta': {
      type: 'boolean',
      description:
        "Make a lost meta table anew, which the store's open refuses to do by itself: every record is kept, but what it held is gone (a commit or document forgotten before may come back with a later import)",
    },
    ...RERANK_OPTIONS,
  },
};

export const evalSpec: CommandSpec = {
  name: 'eval',
  summary: "Measure retrieval quality on a repository's history and a question file",
  usage: 'code-memory eval --repo <git dir> --queries <file.jsonl> [--rev <rev>] [--tools recall,recall_context,retrieve_memory] [--k <n>] [--per-question] [--out <file>] [--html <file>] [--json]',
  details:
    'Imports the history into a fresh temporary store (your store is not touched: --store, --team-store and --project are not used), asks every question through the tools and scores where the gold commit ranks (hit@1/5/10, MRR@10, latency). ' +
    'Question lines: {"id": "q1", "question": "...", "gold_commits": ["<sha>"], "kind": "paraphrase"}.',
  options: {
    repo: { type: 'string', description: 'Git repository whose history is imported', valueName: 'dir' },
    queries: { type: 'string', description: 'JSON Lines question file', valueName: 'file' },
    rev: { type: 'string', description: 'Revision to import (default HEAD)', valueName: 'rev' },
    tools: { type: 'string', description: `Comma-separated tools (default ${EVAL_TOOLS.join(',')})`, valueName: 'list' },
    k: { type: 'string', description: 'Answers scored per question, 1 to 50 (default 10)', valueName: 'n' },
    merges: { type: 'boolean', description: 'Import informative merge commits too' },
    'per-question': { type: 'boolean', description: 'Also print each question\'s ranks' },
    out: { type: 'string', description: 'Also write the JSON report to this file', valueName: 'file' },
    html: { type: 'string', description: 'Also write the report as a page to open in a browser: bars per tool and kind, each question\'s ranks, its commits\' subjects and what each tool answered first', valueName: 'file' },
    ...RERANK_OPTIONS,
  },
};

const TEAM_RECORD_OPTIONS = {
  memory: { type: 'string', description: 'The id of one of your memories', valueName: 'id' },
  summary: { type: 'string', description: 'The id of one of your session summaries', valueName: 'id' },
} as const;

export const shareSpec: CommandSpec = {
  name: 'share',
  summary: 'Share a memory or session summary with your team (shows what leaves the machine first)',
  usage: 'code-memory share --memory <id> | --summary <id> [--yes] --team-store <uri>',
  details: 'Without --yes, prints exactly what would be sent (after redaction) and sends nothing. With --yes, sends it; when the team store cannot be reached or refuses it (a missing bucket, keys or rights refused), it waits in a queue on disk and goes out with the next command or window that reaches a store that takes it.',
  options: { ...TEAM_RECORD_OPTIONS, yes: { type: 'boolean', description: 'Share without asking (after reading the preview)' } },
};

export const unshareSpec: CommandSpec = {
  name: 'unshare',
  summary: 'Remove something you shared from the team store (purged from every object)',
  usage: 'code-memory unshare --memory <id> | --summary <id> | --node <team-node-id> --team-store <uri>',
  options: { ...TEAM_RECORD_OPTIONS, node: { type: 'string', description: 'The team node id (as `code-memory team` lists it)', valueName: 'id' } },
};

export const teamSpec: CommandSpec = {
  name: 'team',
  summary: "The team store's state, queued writes sent now, and what is shared in this project",
  usage: 'code-memory team --team-store <uri> [--json]',
  options: {},
};

/** In the order `--help` lists them. */
export const COMMAND_SPECS: CommandSpec[] = [
  mcpSpec,
  serveSpec,
  importGitSpec,
  observeSpec,
  nodeSpec,
  searchSpec,
  statsSpec,
  exportSpec,
  importSpec,
  forgetSpec,
  shareSpec,
  unshareSpec,
  teamSpec,
  doctorSpec,
  evalSpec,
];
