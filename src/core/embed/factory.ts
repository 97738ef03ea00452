// Builds an embedder from plain, serialisable settings, so the same config can be sent to the
// embedding worker thread and rebuilt there.
import type { Embedder } from './embedder';
import { HashedEmbedder, hashedEmbedderName } from './hashed';
import { OpenAiCompatibleEmbedder, openAiEmbedderName } from './openaiCompatible';
import type { OpenAiCompatibleOptions } from './openaiCompatible';
import { USE_LITE_NAME, UseLiteEmbedder } from './useLite';

export type EmbedderConfig =
  | { provider: 'use-lite'; maxChars?: number }
  | { provider: 'hashed'; dimension?: number }
  | ({ provider: 'openai' } & OpenAiCompatibleOptions)
  | { provider: 'transformers'; modelPath: string; model: string; dimension?: number };

export const DEFAULT_EMBEDDER_CONFIG: EmbedderConfig = { provider: 'use-lite' };

/** The name the embedder of this config has once made (Embedder.name), without making it; 'none' for none. */
export function embedderName(config: EmbedderConfig | null): string {
  if (!config) return 'none';
  switch (config.provider) {
    case 'use-lite':
      return USE_LITE_NAME;
    case 'hashed':
      return hashedEmbedderName(config.dimension);
    case 'openai':
      return openAiEmbedderName(config.model);
    default:
      return config.provider;
  }
}

export async function createEmbedder(config: EmbedderConfig = DEFAULT_EMBEDDER_CONFIG): Promise<Embedder> {
  switch (config.provider) {
    case 'use-lite':
      return new UseLiteEmbedder({ maxChars: config.maxChars });
    case 'hashed':
      return new HashedEmbedder(config.dimension);
    case 'openai':
      return OpenAiCompatibleEmbedder.create(config);
    case 'transformers':
      // @huggingface/transformers brings about 475 MB of packages; it is not part of the
      // install, so the provider is not offered until it is.
      throw new Error(
        "The 'transformers' embedding provider needs @huggingface/transformers, which Code Memory does not install. " +
          "Use 'use-lite' (default, offline) or 'openai' with a local server such as Ollama.",
      );
    default: {
      const provider = (config as { provider?: unknown }).provider;
      throw new Error(`Unknown embedding provider ${JSON.stringify(provider)}: use use-lite, hashed, openai or transformers.`);
    }
  }
}
