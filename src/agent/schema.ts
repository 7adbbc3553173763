/**
 * Tool parameter schemas: a plain JSON Schema object, or any Standard Schema library value that
 * can describe itself as JSON Schema (zod 4.2+, valibot, arktype — the "Standard JSON Schema"
 * interface). Defined structurally so palimpsest depends on no schema library.
 */
import type { JsonObject, JsonValue } from '../core/index.js';
import { isJsonValue } from '../core/index.js';
import { AgentError } from './errors.js';

/** One problem a Standard Schema reported. */
export interface StandardIssue {
  readonly message: string;
  readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined;
}

type StandardResult<Output> =
  | { readonly value: Output; readonly issues?: undefined }
  | { readonly issues: ReadonlyArray<StandardIssue> };

/**
 * The parts of the Standard Schema v1 and Standard JSON Schema v1 interfaces palimpsest uses.
 * `types` carries the inferred output type (phantom, never read at run time).
 */
export interface StandardJsonSchema<Output = unknown> {
  readonly '~standard': {
    readonly version: 1;
    readonly vendor: string;
    // Method syntax on purpose: libraries narrow the option types (for example the JSON Schema
    // target), and methods compare bivariantly where function properties would not.
    validate(value: unknown): StandardResult<Output> | Promise<StandardResult<Output>>;
    readonly jsonSchema: {
      input(options: { readonly target: string }): Record<string, unknown>;
    };
    readonly types?: { readonly input: unknown; readonly output: Output } | undefined;
  };
}

declare const ARGUMENTS_TYPE: unique symbol;

/**
 * A plain JSON Schema that names the type of the arguments it describes, made by
 * {@link jsonSchema}. The type exists only for the compiler: at run time it is the schema.
 */
export type TypedJsonSchema<T> = JsonObject & { readonly [ARGUMENTS_TYPE]: T };

/** What `defineTool` accepts as `parameters`. */
export type ToolParameters = JsonObject | StandardJsonSchema;

/**
 * The argument type a schema validates to: the Standard Schema output, the type given to
 * {@link jsonSchema}, or a JSON object.
 */
export type InferArguments<P> =
  P extends StandardJsonSchema<infer Output>
    ? Output
    : P extends TypedJsonSchema<infer T>
      ? T
      : JsonObject;

/**
 * A JSON Schema for tool parameters with the type `execute` receives. No schema library is
 * involved, so the arguments are checked as for any plain JSON Schema (a JSON object, nothing
 * more): `T` is what the schema promises, and the tool should still treat the values with care.
 *
 * @example
 * ```ts
 * import { defineTool, jsonSchema } from 'palimpsest/agent';
 *
 * const add = defineTool({
 *   name: 'add',
 *   parameters: jsonSchema<{ a: number; b: number }>({
 *     type: 'object',
 *     properties: { a: { type: 'number' }, b: { type: 'number' } },
 *     required: ['a', 'b'],
 *   }),
 *   execute: ({ a, b }) => String(a + b), // a and b are numbers here
 * });
 * console.log(add.name); // 'add'
 * ```
 */
export function jsonSchema<T extends object>(schema: JsonObject): TypedJsonSchema<T> {
  return schema as TypedJsonSchema<T>;
}

/** True when `value` implements the Standard Schema interface with a JSON Schema export. */
export function isStandardJsonSchema(value: unknown): value is StandardJsonSchema {
  if (typeof value !== 'object' && typeof value !== 'function') return false;
  if (value === null) return false;
  const standard = (value as { '~standard'?: unknown })['~standard'];
  if (typeof standard !== 'object' || standard === null) return false;
  const { validate, jsonSchema } = standard as { validate?: unknown; jsonSchema?: unknown };
  return (
    typeof validate === 'function' &&
    typeof jsonSchema === 'object' &&
    jsonSchema !== null &&
    typeof (jsonSchema as { input?: unknown }).input === 'function'
  );
}

/**
 * The JSON Schema sent to the provider for a tool's parameters. Draft-07 is requested because
 * it is what every provider's function-calling API accepts; the `$schema` key is dropped since
 * some providers reject unknown top-level keywords.
 */
export function toJsonSchema(toolName: string, parameters: unknown): JsonObject {
  let schema: unknown = parameters;
  if (isStandardJsonSchema(parameters)) {
    try {
      // Libraries build schemas with undefined fields and their own prototypes: normalize
      // through JSON text, which is also exactly what reaches the provider.
      schema = JSON.parse(
        JSON.stringify(parameters['~standard'].jsonSchema.input({ target: 'draft-07' })),
      );
    } catch (error) {
      throw new AgentError(
        'INVALID_TOOL',
        `tool '${toolName}': its schema library could not export JSON Schema (${String(error)})`,
        { cause: error },
      );
    }
  } else if (
    typeof parameters === 'object' &&
    parameters !== null &&
    '~standard' in (parameters as object)
  ) {
    throw new AgentError(
      'INVALID_TOOL',
      `tool '${toolName}': expected parameters as JSON Schema or a Standard Schema with JSON Schema export (zod 4.2+, valibot, arktype); found a Standard Schema without one`,
    );
  }
  if (!isPlainObject(schema) || !isJsonValue(schema)) {
    throw new AgentError(
      'INVALID_TOOL',
      `tool '${toolName}': expected parameters to be a JSON Schema object, found ${describe(schema)}`,
    );
  }
  const { $schema: _dropped, ...rest } = schema as Record<string, JsonValue>;
  if (rest.type !== undefined && rest.type !== 'object') {
    throw new AgentError(
      'INVALID_TOOL',
      `tool '${toolName}': expected a schema of type 'object' (providers pass arguments as an object), found type ${JSON.stringify(rest.type)}`,
    );
  }
  return { type: 'object', ...rest } as JsonObject;
}

/** Formats Standard Schema issues as one line a model can act on. */
export function formatIssues(issues: ReadonlyArray<StandardIssue>): string {
  return issues
    .slice(0, 10)
    .map((issue) => {
      const path = (issue.path ?? [])
        .map((part) => String(typeof part === 'object' ? part.key : part))
        .join('.');
      return path === '' ? issue.message : `${path}: ${issue.message}`;
    })
    .join('; ');
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object that is not plain JSON' : typeof value;
}
