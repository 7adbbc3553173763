/**
 * Cache breaks explained (issue 35 §3): for every model call, the prefix its request shares with
 * the previous call's, and the event that broke the prefix where it broke.
 */
import { describe, expect, it } from 'vitest';
import {
  type CacheReport,
  cacheReport,
  canonicalJson,
  defineTool,
  requestAt,
  runTurn,
  type Tool,
} from '../../src/agent/index.js';
import { compact, pruneToolResults } from '../../src/compaction/index.js';
import { Session } from '../../src/core/index.js';
import { messageText } from '../../src/model/index.js';
import { scriptedModel } from '../../src/testing/index.js';

function lookupTool(name: string): Tool {
  return defineTool({
    name,
    description: `Looks a key up in ${name}.`,
    parameters: { type: 'object', properties: { key: { type: 'string' } } },
    execute: async () => 'row '.repeat(700),
  });
}

const [alpha, beta] = [lookupTool('alpha'), lookupTool('beta')];

/** Each turn calls a tool once and answers: two calls a turn. */
function toolTurns(turns: number) {
  const script = [];
  for (let turn = 0; turn < turns; turn++) {
    script.push({ toolCalls: [{ name: 'alpha', args: { key: `k${turn}` } }] });
    script.push({ text: `Answer ${turn}.` });
  }
  return scriptedModel(script);
}

/** The request of each call as one text, tools then system then messages, and its model. */
function requestTexts(session: Session, report: CacheReport) {
  return report.calls.map((call) => {
    const { header, messages } = requestAt(session, call.stepStartSeq);
    const tools = header.tools?.length ? canonicalJson(header.tools) : '';
    const text = tools + (header.system ?? '') + messages.map(messageText).join('');
    return { model: `${header.provider}/${header.model}`, text };
  });
}

/** The shared prefixes the report gives equal those of the requests' texts compared whole. */
function expectPrefixesOfTheWholeTexts(session: Session, report: CacheReport): void {
  const texts = requestTexts(session, report);
  texts.forEach(({ model, text }, index) => {
    const call = report.calls[index];
    expect(call?.requestChars).toBe(text.length);
    const before = texts[index - 1];
    let shared = 0;
    if (before !== undefined && before.model === model) {
      while (shared < text.length && text[shared] === before.text[shared]) shared++;
    }
    expect(call?.sharedChars, `call ${index}`).toBe(shared);
  });
}

describe('the cache report of a session', () => {
  it('has each call sharing the whole previous request while the history only grows', async () => {
    const session = Session.create({ id: 'growing' });
    const options = { session, model: toolTurns(3), tools: [alpha], system: 'Be exact.' };
    for (const input of ['one', 'two', 'three']) await runTurn({ ...options, input });
    const report = cacheReport(session);
    expect(report.calls).toHaveLength(6);
    expect(report.breaks).toBe(0);
    expect(report.calls[0]?.sharedTokens).toBe(0);
    for (let index = 1; index < report.calls.length; index++) {
      const [before, call] = [report.calls[index - 1], report.calls[index]];
      expect(call?.sharedTokens).toBe(before?.requestTokens);
      expect(call?.sharedChars).toBe(before?.requestChars);
      expect(call?.break).toBeUndefined();
    }
    expect(report.requestTokens).toBeGreaterThan(report.sharedTokens);
    expectPrefixesOfTheWholeTexts(session, report);
  });

  it('names the request header that changed the system prompt, the tools or the model', async () => {
    const session = Session.create({ id: 'headers' });
    const model = scriptedModel([{ text: 'a' }, { text: 'b' }, { text: 'c' }, { text: 'd' }]);
    const other = scriptedModel([{ text: 'e' }], { modelId: 'other-model' });
    await runTurn({ session, model, tools: [alpha, beta], system: 'Be exact.', input: '1' });
    await runTurn({ session, model, tools: [beta, alpha], system: 'Be exact.', input: '2' });
    await runTurn({ session, model, tools: [beta], system: 'Be exact.', input: '3' });
    await runTurn({ session, model, tools: [beta], system: 'Be brief.', input: '4' });
    await runTurn({ session, model: other, tools: [beta], system: 'Be brief.', input: '5' });
    const report = cacheReport(session);
    const causes = report.calls.map((call) => call.break?.cause);
    expect(causes).toEqual([undefined, 'tools-reordered', 'tools', 'system', 'model']);
    for (const call of report.calls.slice(1)) {
      const header = session.event(call.break?.seq ?? -1);
      expect(header?.type).toBe('request/header');
      expect(header?.seq).toBeLessThan(call.seq);
      expect(call.break?.lostTokens).toBeGreaterThan(0);
    }
    expect(report.calls[4]?.sharedChars).toBe(0);
    expectPrefixesOfTheWholeTexts(session, report);
  });

  it('finds the pruned tool result and the compaction summary that broke the prefix', async () => {
    const session = Session.create({ id: 'rewrites' });
    const options = { session, model: toolTurns(4), tools: [alpha], system: 'Be exact.' };
    await runTurn({ ...options, input: 'one' });
    await runTurn({ ...options, input: 'two' });
    const pruned = pruneToolResults(session, { keepRecentTurns: 1, minChars: 100 });
    expect(pruned.replacementSeqs).toHaveLength(1);
    await runTurn({ ...options, input: 'three' });
    const writer = scriptedModel([{ text: 'Summary: two lookups, two answers.' }]);
    const compaction = await compact(session, { model: writer, keepRecentTokens: 0 });
    expect(compaction.summarySeq).toBeDefined();
    await runTurn({ ...options, input: 'four' });

    const report = cacheReport(session);
    const breaks = report.calls.filter((call) => call.break !== undefined);
    expect(breaks.map((call) => call.break?.cause)).toEqual(['prune', 'compaction']);
    expect(breaks[0]?.break?.seq).toBe(pruned.replacementSeqs[0]);
    expect(breaks[0]?.break?.messageIndex).toBe(2); // user, call, then the pruned result
    expect(breaks[1]?.break?.seq).toBe(compaction.summarySeq);
    expect(breaks[1]?.break?.messageIndex).toBe(0);
    expectPrefixesOfTheWholeTexts(session, report);
  });

  it('sets the cached tokens the provider reported beside the estimate', async () => {
    const session = Session.create({ id: 'reported' });
    const model = scriptedModel([
      { text: 'a', usage: { inputTokens: 120, outputTokens: 1, cacheWriteTokens: 100 } },
      { text: 'b', usage: { inputTokens: 140, outputTokens: 1, cacheReadTokens: 100 } },
    ]);
    await runTurn({ session, model, system: 'Be exact.', input: 'one' });
    await runTurn({ session, model, system: 'Be exact.', input: 'two' });
    const report = cacheReport(session);
    expect(report.calls.map((call) => call.usage)).toEqual([
      { inputTokens: 120, cacheWriteTokens: 100 },
      { inputTokens: 140, cachedInputTokens: 100 },
    ]);
    expect(report.inputTokens).toBe(260);
    expect(report.cachedInputTokens).toBe(100);
    expect(report.cacheWriteTokens).toBe(100);
  });

  it('is empty for a session without model calls', () => {
    const report = cacheReport(Session.create({ id: 'empty' }));
    expect(report).toEqual({ calls: [], requestTokens: 0, sharedTokens: 0, breaks: 0 });
  });
});
