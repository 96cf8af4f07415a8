/**
 * What a statement's span says of it (docs/ARCHITECTURE.md, Tracing): the statement kind and the
 * table it names, never its text's values nor the bound ones (they may be personal data).
 */
import type { Planned } from './planner.js';

export function statementAttributes(plan: Planned): Record<string, string> {
  const table = plan.names?.table;
  return {
    'db.operation.name': plan.kind.toUpperCase(),
    ...(table ? { 'db.collection.name': table.schema ? `${table.schema}.${table.name}` : table.name } : {}),
  };
}
