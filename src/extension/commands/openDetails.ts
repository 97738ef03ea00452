import type { CommandDefinition, Container } from '../container';
import { MemoryNode, ObservationNode, RequestNode, SessionNode } from '../views/nodes';
import type { DetailsTarget } from '../webviews/detailsPanel';

export function openDetailsCommand(c: Container): CommandDefinition {
  return {
    id: 'codeMemory.openDetails',
    run: (arg: unknown) => {
      let target: DetailsTarget | undefined;
      if (arg instanceof ObservationNode) target = { kind: 'observation', scope: arg.scope, id: arg.observation.id };
      else if (arg instanceof SessionNode) target = { kind: 'session', scope: arg.scope, session: arg.session };
      else if (arg instanceof MemoryNode) target = { kind: 'memory', scope: arg.scope, id: arg.memory.id };
      else if (arg instanceof RequestNode) target = { kind: 'request', entry: arg.entry };
      else if (arg && typeof arg === 'object' && 'kind' in arg) target = arg as DetailsTarget;
      if (target) return c.details.show(target);
    },
  };
}
