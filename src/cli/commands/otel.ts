/**
 * `palimpsest otel ID…|--all --endpoint URL [--content] [--header name=value]…`: sessions as
 * OpenTelemetry traces, sent over OTLP/HTTP to a collector or a trace backend.
 */
import { everySession } from '../../store/session/list-all.js';
import type { CliContext } from '../context.js';
import { CliError, EXIT } from '../failure.js';
import { table } from '../terminal.js';

/** Options of `palimpsest otel`. */
export interface OtelCommandOptions {
  readonly all?: boolean;
  readonly endpoint?: string;
  readonly content?: boolean;
  readonly header?: readonly string[];
  readonly agentName?: string;
  readonly serviceName?: string;
}

/** Sends each session's completed turns; exits 9 (unchanged) when there was nothing to send. */
export async function otelCommand(
  context: CliContext,
  ids: readonly string[],
  options: OtelCommandOptions,
): Promise<number> {
  if (ids.length === 0 && options.all !== true) {
    throw new CliError('name sessions to export, or pass --all', EXIT.usage);
  }
  if (options.endpoint === undefined) {
    throw new CliError(
      'expected --endpoint URL (an OTLP/HTTP collector or backend, e.g. http://127.0.0.1:4318)',
      EXIT.usage,
    );
  }
  const headers = parseHeaders(options.header ?? []);
  const otel = await loadOtel();
  const endpoint = options.endpoint;
  // Validates the URL before any session is read; the message never quotes it.
  otel.tracesUrl(endpoint);
  const where = otel.endpointName(endpoint);
  const exporter = otel.otlpHttpExporter({ endpoint, headers });
  const reports: Array<{
    session: string;
    turns: number;
    spans: number;
    openTurnsSkipped: number;
  }> = [];
  try {
    await context.withReader(async (store) => {
      const targets =
        options.all === true
          ? (await everySession(store)).sessions.map((summary) => summary.header.id)
          : ids;
      for (const id of targets) {
        const [report] = await otel.exportStoredSessions(store, [id], {
          exporter,
          endpoint: where,
          content: options.content === true,
          ...(options.agentName === undefined ? {} : { agentName: options.agentName }),
          ...(options.serviceName === undefined ? {} : { serviceName: options.serviceName }),
        });
        if (report !== undefined) reports.push(report);
      }
    });
  } finally {
    await exporter.shutdown();
  }
  const spans = reports.reduce((sum, report) => sum + report.spans, 0);
  if (context.json) {
    context.terminal.json({
      endpoint: where,
      content: options.content === true,
      sessions: reports,
    });
  } else {
    const rows = reports.map((report) => [
      report.session,
      String(report.turns),
      String(report.spans),
      String(report.openTurnsSkipped),
    ]);
    context.terminal.out.write(`${table(['SESSION', 'TURNS', 'SPANS', 'OPEN TURNS'], rows)}\n`);
    context.terminal.out.write(
      `\n${spans} span(s) of ${reports.length} session(s) sent to ${where}${options.content === true ? ', with message content' : ', without message content (--content adds it)'}.\n`,
    );
  }
  if (spans === 0) {
    context.terminal.note(
      'nothing was exported: no session holds a completed turn (a turn is exported when its turn/end is in the log)',
    );
    return EXIT.unchanged;
  }
  return EXIT.ok;
}

/** `name=value` pairs; a malformed one is refused without echoing it (it may hold a secret). */
function parseHeaders(pairs: readonly string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  pairs.forEach((pair, index) => {
    const at = pair.indexOf('=');
    const name = at === -1 ? '' : pair.slice(0, at).trim();
    if (at <= 0 || !/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(name)) {
      throw new CliError(
        `expected --header number ${index + 1} as name=value with a header name before '=', found ${at === -1 ? "no '='" : 'no valid name'} (the value is not printed)`,
        EXIT.usage,
      );
    }
    headers[name] = pair.slice(at + 1);
  });
  return headers;
}

type OtelModule = typeof import('../../adapters/otel/index.js');

/** The exporter is an optional peer: only this command needs it, so it loads here. */
async function loadOtel(): Promise<OtelModule> {
  try {
    return await import('../../adapters/otel/index.js');
  } catch (error) {
    if (error instanceof Error && 'code' in error && error.code === 'ERR_MODULE_NOT_FOUND') {
      throw new CliError(
        `palimpsest otel needs the OpenTelemetry SDK, an optional peer dependency: npm install @opentelemetry/api @opentelemetry/core @opentelemetry/resources @opentelemetry/sdk-trace-base @opentelemetry/exporter-trace-otlp-http @opentelemetry/semantic-conventions (${error.message})`,
        EXIT.failure,
      );
    }
    throw error;
  }
}
