/**
 * The tools `palimpsest run` gives the model: read-only, and confined to the directory the CLI
 * runs in (paths are resolved, symlinks included, and refused when they leave it).
 */
import { readdir, readFile, realpath, stat } from 'node:fs/promises';
import { relative, resolve, sep } from 'node:path';
import { defineTool, type Tool } from '../agent/index.js';

const MAX_BYTES = 64 * 1024;

/** `read_file` and `list_directory` rooted at `root`. */
export function builtinTools(root: string): Tool[] {
  const inside = async (path: string): Promise<string> => {
    const base = await realpath(root);
    const full = await realpath(resolve(base, path));
    const rel = relative(base, full);
    if (rel === '..' || rel.startsWith(`..${sep}`) || resolve(base, rel) !== full) {
      throw new Error(`${path} is outside ${base}; only files under it can be read`);
    }
    return full;
  };
  return [
    defineTool({
      name: 'read_file',
      description: `Reads a text file under the current directory (at most ${MAX_BYTES / 1024} KB).`,
      parameters: {
        type: 'object',
        properties: {
          path: { type: 'string', description: 'a path relative to the current directory' },
        },
        required: ['path'],
      },
      execute: async (args, { signal }) => {
        const path = await inside(String(args.path));
        const info = await stat(path);
        if (!info.isFile()) throw new Error(`${String(args.path)} is not a file`);
        const text = await readFile(path, { encoding: 'utf8', signal });
        return text.length > MAX_BYTES
          ? `${text.slice(0, MAX_BYTES)}\n[… cut at ${MAX_BYTES} characters of ${text.length}]`
          : text;
      },
    }),
    defineTool({
      name: 'list_directory',
      description: 'Lists a directory under the current directory (directories end with /).',
      parameters: {
        type: 'object',
        properties: {
          path: {
            type: 'string',
            description: 'a path relative to the current directory; . for itself',
          },
        },
      },
      execute: async (args) => {
        const path = await inside(typeof args.path === 'string' ? args.path : '.');
        const entries = await readdir(path, { withFileTypes: true });
        return entries
          .map((entry) => (entry.isDirectory() ? `${entry.name}/` : entry.name))
          .sort()
          .join('\n');
      },
    }),
  ];
}
