import type { CommandDefinition, Container } from '../container';
import { readConfig } from '../config';

/** Shows exactly what capture stored (after redaction), and what it is set to skip. */
export function showCapturedCommand(c: Container): CommandDefinition {
  return {
    id: 'codeMemory.showCaptured',
    run: () => {
      const config = readConfig();
      const s = c.capture.queue.stats;
      c.captured.note(
        [
          `— Capture is ${c.capture.state}. Store: ${c.engines.storeUri}`,
          `  Excluded (codeMemory.capture.exclude): ${config.exclude.join(', ') || 'nothing'}`,
          `  Secrets (keys, tokens, passwords) are redacted before anything is stored. Git: ${c.capture.git.via}.`,
          `  This window: ${s.events} events → ${s.observations} observations in ${s.drains} writes; ${s.dropped} dropped, ${s.errors} failed writes${s.lastError ? ` (last: ${s.lastError})` : ''}.`,
          `  Event handlers took ${s.handlerCalls ? ((s.handlerMs / s.handlerCalls) * 1000).toFixed(1) : '0'} µs per call on average over ${s.handlerCalls} calls (max ${s.handlerMaxMs.toFixed(2)} ms).`,
        ].join('\n'),
      );
      c.captured.show();
    },
  };
}
