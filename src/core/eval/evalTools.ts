// The tools an evaluation can ask, apart from the evaluation itself so that `code-memory --help`
// can list them without loading the engine.

export const EVAL_TOOLS = ['recall', 'recall_context', 'retrieve_memory'] as const;
export type EvalTool = (typeof EVAL_TOOLS)[number];
