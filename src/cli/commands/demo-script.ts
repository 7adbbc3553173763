/**
 * The demo's scenario: a small project the tools can look at, the questions of each turn, and,
 * for offline runs, what the scripted model answers at each step of each turn.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LanguageModelV3CallOptions } from '@ai-sdk/provider';
import type { ScriptedResponse, ScriptStep } from '../../testing/index.js';

/** The questions, turn by turn (turn 4 is the one the crash interrupts). */
export const PROMPTS = [
  'What is this project? Have a look around.',
  'Why did last night’s build fail? The log is logs/build.log.',
  'What should change in src/config.ts to fix it?',
  'Run the tests to check the fix.',
  'Did the tests pass?',
] as const;

const BUILD_LOG = [
  ...Array.from(
    { length: 180 },
    (_, i) =>
      `[build] step ${String(i + 1).padStart(3, '0')} compiled module ${i % 7 === 0 ? 'src/server.ts' : `src/lib/part${i}.ts`} in ${(i * 37) % 90} ms`,
  ),
  '[build] ERROR src/config.ts:12: port must be a number, found "8080"',
  '[build] 1 error, 180 modules, build failed after 41.2 s',
].join('\n');

/** Writes the demo project into `root`. */
export function writeWorkspace(root: string): void {
  mkdirSync(join(root, 'src'), { recursive: true });
  mkdirSync(join(root, 'logs'), { recursive: true });
  writeFileSync(
    join(root, 'README.md'),
    '# tiny-server\n\nA small HTTP server. `npm run build` compiles it; `npm test` runs its tests.\n',
  );
  writeFileSync(
    join(root, 'package.json'),
    `${JSON.stringify({ name: 'tiny-server', scripts: { build: 'tsc', test: 'vitest run' } }, null, 2)}\n`,
  );
  writeFileSync(
    join(root, 'src', 'config.ts'),
    "export const config = {\n  host: '0.0.0.0',\n  // read from the environment in production\n  port: process.env.PORT ?? '8080',\n};\n",
  );
  writeFileSync(
    join(root, 'src', 'server.ts'),
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the file written is TypeScript source.
    "import { config } from './config.js';\n\nexport function start() {\n  return `listening on ${config.host}:${config.port}`;\n}\n",
  );
  writeFileSync(join(root, 'logs', 'build.log'), `${BUILD_LOG}\n`);
}

/** The scripted model's answers for each turn, step by step. */
const PLAYBOOK: Record<string, readonly ScriptedResponse[]> = {
  [PROMPTS[0]]: [
    {
      reasoning: 'Start with the top-level listing.',
      toolCalls: [{ name: 'list_directory', args: { path: '.' } }],
    },
    {
      toolCalls: [
        { name: 'read_file', args: { path: 'README.md' } },
        { name: 'read_file', args: { path: 'package.json' } },
      ],
    },
    {
      text: 'It is tiny-server, a small HTTP server in TypeScript: `npm run build` compiles it with tsc and `npm test` runs vitest. The code is in src/ (server.ts, config.ts) and build logs are in logs/.',
    },
  ],
  [PROMPTS[1]]: [
    { toolCalls: [{ name: 'read_file', args: { path: 'logs/build.log' } }] },
    {
      reasoning: 'The only ERROR line is near the end.',
      text: 'The build failed on one type error: `src/config.ts:12: port must be a number, found "8080"`. Everything else (180 modules) compiled.',
    },
  ],
  [PROMPTS[2]]: [
    { toolCalls: [{ name: 'read_file', args: { path: 'src/config.ts' } }] },
    {
      text: "`port` is `process.env.PORT ?? '8080'`, a string. Make it a number: `port: Number(process.env.PORT ?? 8080)`.",
    },
  ],
  [PROMPTS[3]]: [
    {
      text: 'Running the test suite now.',
      toolCalls: [{ name: 'run_tests', args: { filter: 'config' } }],
    },
  ],
  [PROMPTS[4]]: [
    {
      text: 'I cannot tell: the test run was interrupted (the log records its outcome as unknown), so it may or may not have finished. I will run the tests again before claiming the fix works.',
    },
  ],
};

const SUMMARY =
  '## Goal\nFind why the tiny-server build failed and fix it.\n## Decisions\nThe failure is src/config.ts:12: `port` is the string "8080"; make it `Number(process.env.PORT ?? 8080)`.\n## Files and commands\nREADME.md, package.json (build: tsc, test: vitest run), logs/build.log, src/config.ts.\n## Next step\nApply the change and run the tests.';

/** The scripted model's behaviour for the demo: the playbook step for the current turn. */
export const DEMO_SCRIPT: readonly ScriptStep[] = [
  (request: LanguageModelV3CallOptions): ScriptedResponse => {
    const prompt = request.prompt;
    const last = prompt[prompt.length - 1];
    const lastText =
      last?.role === 'user'
        ? last.content.map((part) => (part.type === 'text' ? part.text : '')).join('')
        : '';
    if (lastText.includes('replaced by a summary')) return { text: SUMMARY };
    let userIndex = prompt.length - 1;
    while (userIndex >= 0 && prompt[userIndex]?.role !== 'user') userIndex--;
    const user = prompt[userIndex];
    const question =
      user?.role === 'user'
        ? user.content.map((part) => (part.type === 'text' ? part.text : '')).join('')
        : '';
    const step = prompt
      .slice(userIndex + 1)
      .filter((message) => message.role === 'assistant').length;
    const responses = PLAYBOOK[question] ?? [{ text: 'I have no scripted answer for that.' }];
    return { ...(responses[Math.min(step, responses.length - 1)] ?? { text: '…' }), delayMs: 2 };
  },
];
