// Any server that speaks OpenAI's POST /embeddings: OpenAI itself, Azure-style proxies,
// LM Studio, vLLM, and Ollama (baseUrl http://127.0.0.1:11434/v1). Nothing is sent unless
// the user configures this provider.
import { checkDimension, l2Normalize, type Embedder } from './embedder';
import { postJson } from '../modelServer';
import { displayUri } from '../store/objectStorage';
import { registerSecret } from '../capture/redact';

export interface OpenAiCompatibleOptions {
  /** e.g. https://api.openai.com/v1 or http://127.0.0.1:11434/v1 */
  baseUrl: string;
  model: string;
  apiKey?: string;
  /** The model's output size. When absent, one probe request finds it. */
  dimension?: number;
  /** Texts per request. */
  batchSize?: number;
  timeoutMs?: number;
}

interface EmbeddingsResponse {
  data?: Array<{ embedding?: number[]; index?: number }>;
}

/** The name an embedder of this model behind an OpenAI-compatible server has (Embedder.name). */
export function openAiEmbedderName(model: string): string {
  return `openai:${model}`;
}

export class OpenAiCompatibleEmbedder implements Embedder {
  readonly name: string;
  private dim: number;
  private readonly url: string;

  private constructor(private readonly options: OpenAiCompatibleOptions, dimension: number) {
    this.url = options.baseUrl.replace(/\/+$/, '') + '/embeddings';
    if (options.apiKey) registerSecret(options.apiKey);
    this.name = openAiEmbedderName(options.model);
    this.dim = dimension;
  }

  get dimension(): number {
    return this.dim;
  }

  /** One request to the server per call of a ModelQueue, as embed() sends them. */
  get textsPerCall(): number {
    return Math.max(1, this.options.batchSize ?? 64);
  }

  static async create(options: OpenAiCompatibleOptions): Promise<OpenAiCompatibleEmbedder> {
    if (!options.baseUrl || !options.model) {
      throw new Error('The openai embedding provider needs baseUrl and model (for Ollama: baseUrl http://127.0.0.1:11434/v1).');
    }
    const e = new OpenAiCompatibleEmbedder(options, options.dimension ?? 0);
    if (!options.dimension) {
      const [probe] = await e.request(['dimension probe']);
      e.dim = probe.length;
    }
    return e;
  }

  async embed(texts: string[]): Promise<Float32Array[]> {
    const batch = this.textsPerCall;
    const out: Float32Array[] = [];
    for (let start = 0; start < texts.length; start += batch) {
      const chunk = texts.slice(start, start + batch);
      // Servers reject empty inputs; an empty text gets a zero vector like in other providers.
      const keep = chunk.map((t, i) => (t.trim() ? i : -1)).filter((i) => i >= 0);
      const vectors = keep.length ? await this.request(keep.map((i) => chunk[i])) : [];
      checkDimension(this.name, this.dim, vectors);
      const filled: Float32Array[] = chunk.map(() => new Float32Array(this.dim));
      keep.forEach((i, k) => (filled[i] = l2Normalize(vectors[k])));
      out.push(...filled);
    }
    return out;
  }

  private async request(input: string[]): Promise<Float32Array[]> {
    const json = (await postJson(this.url, { model: this.options.model, input }, { label: 'Embedding server', apiKey: this.options.apiKey, timeoutMs: this.options.timeoutMs ?? 60_000 })) as EmbeddingsResponse | null;
    const data = json?.data;
    if (!Array.isArray(data) || data.length !== input.length) {
      throw new Error(`Embedding server ${displayUri(this.url)} returned ${data?.length ?? 'no'} embeddings for ${input.length} inputs.`);
    }
    const ordered = [...data].sort((a, b) => (a.index ?? 0) - (b.index ?? 0));
    return ordered.map((d) => {
      if (!Array.isArray(d.embedding)) throw new Error(`Embedding server ${displayUri(this.url)} returned an item without an embedding.`);
      return Float32Array.from(d.embedding);
    });
  }
}
