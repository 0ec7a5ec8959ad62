import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const SCRIPT = join(import.meta.dirname, '../../scripts/check-names.mjs');
const folders: string[] = [];

/** Runs the check over one folder holding `source`; the exit code and what it printed. */
async function check(source: string): Promise<{ code: number; output: string }> {
  const folder = await mkdtemp(join(tmpdir(), 'baton-names-'));
  folders.push(folder);
  await writeFile(join(folder, 'decide.ts'), source);
  try {
    const { stdout, stderr } = await run(process.execPath, [SCRIPT, folder]);
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, output: failed.stdout + failed.stderr };
  }
}

afterEach(async () => {
  for (const folder of folders.splice(0)) await rm(folder, { recursive: true, force: true });
});

describe('deciding code compares no platform or vendor name', () => {
  it('fails on an equality with a vendor name, naming the line', async () => {
    const result = await check("export const f = (v: string) => {\n  if (v === 'codex') return 1;\n  return 0;\n};\n");
    expect(result.code).toBe(1);
    expect(result.output).toContain("decide.ts:2: compares with 'codex'");
  });

  it('fails on a case label and an includes of a platform name', async () => {
    const source =
      "export function g(p: string) {\n  switch (p) {\n    case 'slack':\n      return ['telegram', 'x'].includes(p);\n  }\n  return p.includes('discord');\n}\n";
    const result = await check(source);
    expect(result.code).toBe(1);
    expect(result.output).toContain("decide.ts:3: case 'slack'");
    expect(result.output).toContain("decide.ts:4: includes 'telegram'");
    expect(result.output).toContain("decide.ts:6: includes 'discord'");
  });

  it('passes a map keyed by names and a comparison with another word', async () => {
    const source =
      "const COMMANDS: Record<string, string> = { codex: 'codex', claude: 'claude' };\nexport const h = (v: string) => v === 'default' || COMMANDS[v] !== undefined;\n";
    const result = await check(source);
    expect(result.code).toBe(0);
  });
});
