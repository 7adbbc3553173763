/** Every system and resume the side-by-side benchmark knows, by name. */
import type { BenchSystem, ResumeTarget } from '../system.js';
import { FLOOR_RESUMES, FLOOR_SYSTEMS } from './floors.js';
import { LANGGRAPH_RESUME, LANGGRAPH_SYSTEM } from './langgraph.js';
import { OPENAI_SYSTEM } from './openai.js';
import { PALIMPSEST_RESUMES, PALIMPSEST_SYSTEMS } from './palimpsest.js';
import { PI_RESUME, PI_SYSTEM } from './pi.js';

export const SYSTEMS: readonly BenchSystem[] = [
  ...PALIMPSEST_SYSTEMS,
  PI_SYSTEM,
  LANGGRAPH_SYSTEM,
  OPENAI_SYSTEM,
  ...FLOOR_SYSTEMS,
];

export const RESUMES: readonly ResumeTarget[] = [
  ...PALIMPSEST_RESUMES,
  PI_RESUME,
  LANGGRAPH_RESUME,
  ...FLOOR_RESUMES,
];

function byName<T extends { readonly name: string }>(list: readonly T[], name: string): T {
  const found = list.find((item) => item.name === name);
  if (found === undefined) throw new Error(`no benchmark system named ${name}`);
  return found;
}

export const systemNamed = (name: string): BenchSystem => byName(SYSTEMS, name);
export const resumeNamed = (name: string): ResumeTarget => byName(RESUMES, name);
