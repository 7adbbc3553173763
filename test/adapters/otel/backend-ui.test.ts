/**
 * The trace backend's own web UI showing an exported session, in Debian's Chromium: the turn's
 * spans are on the page a person would open. With PALIMPSEST_UPDATE_SCREENSHOTS=1 the page is
 * saved as docs/observability/backend-trace.png (the picture in docs/observability.md).
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { SpanKind } from '@opentelemetry/api';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { exportSession, otlpHttpExporter } from '../../../src/adapters/otel/index.js';
import { describeBrowser, launch } from '../../viewer/browser.js';
import { loopSession } from './helpers.js';
import {
  BACKEND_SCOPE,
  backendInstalled,
  scalarAttributes,
  startTraceBackend,
  type TraceBackend,
} from './trace-backend.js';

const run =
  backendInstalled() || process.env.PALIMPSEST_REQUIRE_OTEL_BACKEND === '1'
    ? describeBrowser
    : describeBrowser.skip;

run("the trace backend's UI", () => {
  let backend: TraceBackend;
  let browser: Browser;

  beforeAll(async () => {
    backend = await startTraceBackend();
    browser = await launch();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await backend?.close();
  });

  it('shows an exported turn with its model calls and tool executions, under the HTTP request that ran it', async () => {
    const session = await loopSession('ui-session');
    const first = session.events[0]?.time ?? Date.now();
    const last = session.events.at(-1)?.time ?? first;
    // This backend's UI shows traces that begin with an HTTP server span named `request`: the
    // application's own instrumentation makes it (here through the SDK's tracer), and the
    // export hangs the session's turns under it with `parentCall`.
    const exporter = otlpHttpExporter({ endpoint: backend.endpoint });
    const provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ 'service.name': 'palimpsest-demo' }),
      spanProcessors: [new SimpleSpanProcessor(exporter)],
    });
    const request = provider.getTracer(BACKEND_SCOPE).startSpan('request', {
      kind: SpanKind.SERVER,
      startTime: first - 2,
      attributes: {
        'http.request.method': 'POST',
        'url.full': 'http://localhost:3000/chat',
        'fpx.http.request.pathname': '/chat',
        'http.response.status_code': 200,
      },
    });
    request.end(last + 2);
    await provider.forceFlush();
    const parentCall = request.spanContext();
    const options = {
      scopeName: BACKEND_SCOPE,
      redact: scalarAttributes,
      agentName: 'palimpsest-demo',
      serviceName: 'palimpsest-demo',
      parentCall,
    };
    await exportSession(session, { ...options, exporter });
    await provider.shutdown();

    const page = await browser.newPage({ viewport: { width: 1400, height: 1250 } });
    // The page may reach for fonts or telemetry on the internet: only loopback is allowed.
    await page.route('**/*', (route) => {
      const host = new URL(route.request().url()).hostname;
      return host === '127.0.0.1' || host === 'localhost' ? route.continue() : route.abort();
    });
    await page.goto(`${backend.ui}/requests/${parentCall.traceId}`);
    await page.getByText('Routes').first().waitFor({ timeout: 20_000 });
    // The footer's panel toggles (their icons come from the internet, so they show blank here):
    // one opens the timeline of the request's spans.
    const toggles = page.locator('nav button');
    for (let index = (await toggles.count()) - 1; index >= 0; index--) {
      await toggles.nth(index).click();
      await page.waitForTimeout(1000);
      if ((await page.getByText('execute_tool read_note').count()) > 0) break;
    }
    await page.getByText('execute_tool read_note').first().waitFor({ timeout: 20_000 });
    for (const name of [
      'invoke_agent palimpsest-demo',
      'chat deepseek-chat',
      'execute_tool explode',
    ]) {
      await expect(page.getByText(name).first().isVisible()).resolves.toBe(true);
    }
    const artifacts = join(import.meta.dirname, '../../viewer/.artifacts');
    mkdirSync(artifacts, { recursive: true });
    await page.screenshot({ path: join(artifacts, 'otel-backend-trace.png') });
    if (process.env.PALIMPSEST_UPDATE_SCREENSHOTS === '1') {
      const docs = join(import.meta.dirname, '../../../docs/observability');
      mkdirSync(docs, { recursive: true });
      await page.screenshot({ path: join(docs, 'backend-trace.png') });
    }
  });
});
