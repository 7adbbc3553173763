/**
 * One item of every `AgentInputItem` type of `@openai/agents` 0.14 (typed by the SDK, so a shape
 * the SDK does not accept fails to compile), each with the palimpsest event type it maps to and
 * the role of the message palimpsest derives from it (none for an empty one).
 */
import type {
  AgentInputItem,
  ApplyPatchCallItem,
  ApplyPatchCallResultItem,
  AssistantMessageItem,
  ComputerCallResultItem,
  ComputerUseCallItem,
  FunctionCallItem,
  FunctionCallResultItem,
  HostedToolCallItem,
  ProgramCallItem,
  ProgramCallResultItem,
  ReasoningItem,
  ShellCallItem,
  ShellCallResultItem,
  SystemMessageItem,
  ToolSearchCallItem,
  ToolSearchOutputItem,
  UnknownItem,
  UserMessageItem,
} from '@openai/agents';

export interface Sample {
  readonly name: string;
  readonly item: AgentInputItem;
  readonly eventType: 'user/message' | 'context/message' | 'assistant/message' | 'tool/result';
  /** The derived message's role and its block types. */
  readonly derives: { readonly role: string; readonly blocks: readonly string[] };
}

const user: UserMessageItem = {
  type: 'message',
  role: 'user',
  content: [
    { type: 'input_text', text: 'What is in this picture?' },
    { type: 'input_image', image: 'data:image/png;base64,iVBORw0KGgo=' },
    { type: 'input_file', file: { url: 'https://example.com/a.pdf' }, filename: 'a.pdf' },
  ],
};
const userText: UserMessageItem = { role: 'user', content: 'Hello' };
const system: SystemMessageItem = { role: 'system', content: 'Be brief.' };
const assistant: AssistantMessageItem = {
  id: 'msg_1',
  type: 'message',
  role: 'assistant',
  status: 'completed',
  content: [
    { type: 'output_text', text: 'A cat.', providerData: { annotations: [] } },
    { type: 'refusal', refusal: 'I cannot say more.' },
  ],
};
const reasoning: ReasoningItem = {
  id: 'rs_1',
  type: 'reasoning',
  content: [{ type: 'input_text', text: 'The user wants a description.' }],
  providerData: { encrypted_content: 'gAAAA' },
};
const functionCall: FunctionCallItem = {
  type: 'function_call',
  callId: 'call_1',
  name: 'lookup',
  namespace: 'kb',
  status: 'completed',
  arguments: '{"q":"cats"}',
};
const functionResult: FunctionCallResultItem = {
  type: 'function_call_result',
  callId: 'call_1',
  name: 'lookup',
  status: 'completed',
  output: { type: 'text', text: 'Cats are mammals.' },
};
const computerCall: ComputerUseCallItem = {
  type: 'computer_call',
  callId: 'call_2',
  status: 'completed',
  action: { type: 'click', x: 10, y: 20, button: 'left' },
};
const computerResult: ComputerCallResultItem = {
  type: 'computer_call_result',
  callId: 'call_2',
  output: { type: 'computer_screenshot', data: 'data:image/png;base64,iVBORw0KGgo=' },
};
const shellCall: ShellCallItem = {
  type: 'shell_call',
  callId: 'call_3',
  status: 'completed',
  action: { commands: ['ls'] },
};
const shellResult: ShellCallResultItem = {
  type: 'shell_call_output',
  callId: 'call_3',
  output: [{ stdout: 'README.md\n', stderr: '', outcome: { type: 'exit', exitCode: 0 } }],
};
const patchCall: ApplyPatchCallItem = {
  type: 'apply_patch_call',
  callId: 'call_4',
  status: 'completed',
  operation: { type: 'delete_file', path: 'old.txt' },
};
const patchResult: ApplyPatchCallResultItem = {
  type: 'apply_patch_call_output',
  callId: 'call_4',
  status: 'completed',
  output: 'deleted old.txt',
};
const programCall: ProgramCallItem = {
  type: 'program',
  callId: 'call_5',
  code: 'print(1 + 1)',
  fingerprint: 'fp_1',
};
const programResult: ProgramCallResultItem = {
  type: 'program_output',
  callId: 'call_5',
  output: '2',
  status: 'completed',
};
const hosted: HostedToolCallItem = {
  type: 'hosted_tool_call',
  id: 'ws_1',
  name: 'web_search_call',
  status: 'completed',
  providerData: { action: { type: 'search', query: 'cats' } },
};
const searchCall: ToolSearchCallItem = {
  type: 'tool_search_call',
  id: 'ts_1',
  callId: 'call_6',
  execution: 'server',
  arguments: { query: 'weather' },
  status: 'completed',
};
const searchOutput: ToolSearchOutputItem = {
  type: 'tool_search_output',
  id: 'tso_1',
  callId: 'call_6',
  execution: 'server',
  status: 'completed',
  tools: [{ type: 'function', name: 'get_weather' }],
};
const unknown: UnknownItem = { type: 'unknown', id: 'x_1', providerData: { kind: 'future' } };

export const SAMPLES: readonly Sample[] = [
  sample('user message', user, 'user/message', 'user', ['text', 'image', 'text']),
  sample('user message (text)', userText, 'user/message', 'user', ['text']),
  sample('system message', system, 'context/message', 'user', ['text']),
  sample('assistant message', assistant, 'assistant/message', 'assistant', ['text', 'text']),
  sample('reasoning', reasoning, 'assistant/message', 'assistant', ['reasoning']),
  sample('function_call', functionCall, 'assistant/message', 'assistant', ['tool-call']),
  sample('function_call_result', functionResult, 'tool/result', 'tool', ['tool-result']),
  sample('computer_call', computerCall, 'assistant/message', 'assistant', ['tool-call']),
  sample('computer_call_result', computerResult, 'tool/result', 'tool', ['tool-result']),
  sample('shell_call', shellCall, 'assistant/message', 'assistant', ['tool-call']),
  sample('shell_call_output', shellResult, 'tool/result', 'tool', ['tool-result']),
  sample('apply_patch_call', patchCall, 'assistant/message', 'assistant', ['tool-call']),
  sample('apply_patch_call_output', patchResult, 'tool/result', 'tool', ['tool-result']),
  sample('program', programCall, 'assistant/message', 'assistant', ['tool-call']),
  sample('program_output', programResult, 'tool/result', 'tool', ['tool-result']),
  sample('hosted_tool_call', hosted, 'assistant/message', 'assistant', ['text']),
  sample('tool_search_call', searchCall, 'assistant/message', 'assistant', ['text']),
  sample('tool_search_output', searchOutput, 'assistant/message', 'assistant', ['text']),
  sample(
    'compaction',
    { type: 'compaction', encrypted_content: 'gAAAA-compacted', created_by: 'responses.compact' },
    'user/message',
    'user',
    ['text'],
  ),
  sample('unknown', unknown, 'context/message', 'user', ['text']),
];

function sample(
  name: string,
  item: AgentInputItem,
  eventType: Sample['eventType'],
  role: string,
  blocks: readonly string[],
): Sample {
  return { name, item, eventType, derives: { role, blocks } };
}
