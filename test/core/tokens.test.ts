import fc from 'fast-check';
import { encode as encodeCl100k } from 'gpt-tokenizer/encoding/cl100k_base';
import { encode as encodeO200k } from 'gpt-tokenizer/encoding/o200k_base';
import { describe, expect, it } from 'vitest';
import { estimateMessageTokens, estimateTokens, IMAGE_TOKENS } from '../../src/core/tokens.js';

// Samples written for this test, one per kind of text an agent session carries.
const samples: Record<string, string> = {
  english:
    'The recorder acknowledges an append in memory at once and makes it durable in the next batch. A crash can lose only what was never acknowledged; the log on disk never contradicts what the session reported.',
  chinese:
    '会话日志只追加不修改。模型看到的消息来自日志上的表面视图；压缩摘要通过替换事件改写历史，而原始事件仍然保存在日志中，随时可以重建任何一次请求。',
  japanese:
    'セッションのログは追記専用です。モデルが見るメッセージはサーフェスから導出され、要約はイベントを置き換えるだけで、元の記録は消えません。',
  korean:
    '세션 로그는 추가만 가능합니다. 모델이 보는 메시지는 표면에서 파생되며, 요약은 원래 이벤트를 지우지 않고 대체 이벤트를 추가합니다.',
  russian:
    'Журнал сессии только дополняется. Сжатие истории добавляет событие-замену, а исходные события остаются в журнале навсегда.',
  german:
    'Überprüfe die Größe der Datei und schließe den Schreibvorgang ordnungsgemäß ab, bevor du fortfährst.',
  jsonCompact: JSON.stringify({
    seq: 4812,
    type: 'tool/result',
    data: {
      turn: 12,
      step: 3,
      callId: 'call_9f2Kx71aQ',
      ok: true,
      sizes: [12, 4096, 65536],
      path: 'src/core/session.ts',
    },
  }),
  jsonPretty: JSON.stringify(
    {
      files: [
        { name: 'index.ts', lines: 120 },
        { name: 'surface.ts', lines: 311 },
      ],
      total: 431,
      truncated: false,
    },
    null,
    2,
  ),
  typescript: [
    'export function foldSurface(events: readonly SessionEvent[]): SurfaceFold {',
    '  const manager = new SurfaceManager();',
    '  for (const event of events) {',
    '    if (event.surfaceOp === undefined) continue; // log-only',
    '    manager.validateNext(event);',
    '  }',
    '  return { seqs: manager.seqs, replaceGeneration: manager.generation, replacements: [] };',
    '}',
  ].join('\n'),
  base64:
    'aGVsbG8gd29ybGQsIHRoaXMgaXMgYSBiYXNlNjQgcGF5bG9hZCBvZiBhIHNtYWxsIGltYWdlIGNodW5rLg==Zm9vYmFyQkFaMTIz',
  hex: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855deadbeef0123456789abcdef',
  uuids:
    '3f2c9a1e-7b4d-4c61-9e0a-52d8f1b3c7a4 0b9e6d2f-1c3a-4f8e-b5d7-9a0c2e4f6b8d 7d1e3f5a-9b2c-4d6e-8f0a-1b3c5d7e9f2a',
  emoji:
    'Deploy finished 🚀✅ tests passed 🎉🎉 but the linter complained 😬🔥 — retrying ♻️ now 👍',
  stackTrace: [
    'TypeError: Cannot read properties of undefined (reading "seq")',
    '    at SurfaceManager.validateNext (file:///app/dist/core/surface.js:184:31)',
    '    at Session.append (file:///app/dist/core/session.js:201:18)',
    '    at async runTurn (file:///app/dist/agent/turn.js:97:5)',
  ].join('\n'),
  minified:
    'function a(b,c){return b.map(function(d){return d*c+1}).filter(Boolean).reduce((e,f)=>e+f,0)}var g=a([1,2,3],7);console.log(g);',
  shell:
    'npm ci --no-audit && npx vitest run test/core/surface.test.ts -t "replace" 2>&1 | tee /tmp/out.log; echo $?',
};

describe('estimateTokens', () => {
  it.each(Object.entries(samples))(
    'never counts fewer tokens than cl100k_base or o200k_base (%s)',
    (_name, text) => {
      const exact = Math.max(encodeCl100k(text).length, encodeO200k(text).length);
      expect(estimateTokens(text)).toBeGreaterThanOrEqual(exact);
    },
  );

  it.each(['english', 'jsonCompact', 'typescript', 'chinese'])(
    'stays within 2.5× of the larger tokenizer count for %s',
    (name) => {
      const text = samples[name] ?? '';
      const exact = Math.max(encodeCl100k(text).length, encodeO200k(text).length);
      expect(estimateTokens(text)).toBeLessThanOrEqual(2.5 * exact);
    },
  );

  it('counts nothing for an empty text and grows with the text', () => {
    expect(estimateTokens('')).toBe(0);
    expect(estimateTokens('a'.repeat(400))).toBeGreaterThan(estimateTokens('a'.repeat(40)));
  });

  it('counts what a run-by-run reading of the rules in its notes counts (property)', () => {
    // Maximal runs of one class, each costed by the module notes' rules, in half tokens.
    const runs = /[A-Za-z0-9]+|[ \t]+|[\u00c0-\u024f\u0370-\u06ff\u0900-\u0dff]+|[\s\S]/gu;
    const cjk =
      /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\u1100-\u11ff\uf900-\ufaff\u3000-\u303f\uff00-\uffef]/u;
    const wordHalves = (word: string): number => {
      if (/^[0-9]+$/.test(word)) return 2 * Math.ceil(word.length / 3);
      const caseRuns = word.match(/[A-Z]+|[a-z]+/g) ?? [];
      if (/[0-9]/.test(word) || caseRuns.length > 3) return 2 * word.length;
      // A lower-case run after an upper-case one continues its token run (`Surface`).
      let tokens = 0;
      let run = 0;
      for (const part of caseRuns) {
        if (run > 0 && /^[A-Z]/.test(part)) {
          tokens += Math.ceil(run / 4);
          run = 0;
        }
        run += part.length;
      }
      return 2 * (tokens + Math.ceil(run / 4));
    };
    const reference = (text: string): number => {
      let halves = 0;
      for (const [piece] of text.matchAll(runs)) {
        if (/^[A-Za-z0-9]/.test(piece)) halves += wordHalves(piece);
        else if (/^[ \t]/.test(piece)) halves += 2 * Math.ceil((piece.length - 1) / 4);
        else if (piece.length > 1 && (piece.codePointAt(0) ?? 0) <= 0xffff)
          halves += 2 * Math.ceil(piece.length / 2);
        else if (/^[\u00c0-\u024f\u0370-\u06ff\u0900-\u0dff]$/u.test(piece)) halves += 2;
        else if (piece.charCodeAt(0) < 128) halves += 2;
        else if (cjk.test(piece)) halves += 3;
        else halves += 6;
      }
      return Math.ceil(halves / 2);
    };
    const pieces = [
      'a',
      'Zq',
      'QX',
      'abcde',
      '7',
      '2024',
      ' ',
      '    ',
      '\t',
      '\n',
      '.',
      '{"k":',
      'é',
      'Жи',
      'λ',
      '中',
      'あ',
      '한',
      '😀',
      '€',
      '\u0905',
      'camelCaseName',
      'sha1f3e9',
    ];
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...pieces), { maxLength: 40 }), (parts) => {
        const text = parts.join('');
        expect(estimateTokens(text)).toBe(reference(text));
      }),
      { numRuns: 2_000 },
    );
  });

  it('counts a message with its framing, tool calls and images', () => {
    const tokens = estimateMessageTokens({
      id: 'a',
      role: 'assistant',
      content: [
        { type: 'text', text: 'Reading it.' },
        { type: 'tool-call', id: 'c', name: 'read_file', arguments: '{"path":"README.md"}' },
        { type: 'image', mediaType: 'image/png', data: 'iVBO' },
      ],
      source: { kind: 'model', provider: 'p', model: 'm' },
    });
    expect(tokens).toBeGreaterThan(IMAGE_TOKENS + 10);
  });
});
