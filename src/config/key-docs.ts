/**
 * The documentation every `config.toml` key carries: zod's own description plus a human type
 * label, attached where the key is declared, and read back into rows for the configuration
 * reference (docs/configuration.md) and for error messages.
 */
import { z } from 'zod';

/** Extra metadata kept beside zod's `description`: the value's shape, as shown in errors and docs. */
interface KeyMeta {
  type: string;
  itemType?: string;
}
const keyMeta = z.registry<KeyMeta>();

/** Attaches the description (zod's own) and the human type label to a key's outermost schema. */
export function documented<T extends z.ZodType>(schema: T, type: string, description: string, itemType?: string): T {
  const described = schema.describe(description);
  keyMeta.add(described, itemType === undefined ? { type } : { type, itemType });
  return described;
}

/** One documented key of `config.toml`, for the configuration reference (docs/configuration.md) and error messages. */
export interface ConfigKeyDoc {
  /** TOML table, e.g. `harness` or `channels.telegram`. */
  readonly section: string;
  /** Key inside the table; `<alias>` stands for any alias name under `[projects]`. */
  readonly key: string;
  /** Shape of the value with its unit, e.g. `integer minutes, 1 to 240`. */
  readonly type: string;
  /** For an array, the shape of one entry; else undefined. */
  readonly itemType: string | undefined;
  /** The default as a TOML literal; undefined when the key has none (it is then unset). */
  readonly default: string | undefined;
  /** One sentence: meaning and unit. */
  readonly description: string;
}

/** Renders a default value as TOML source. */
function tomlLiteral(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(tomlLiteral).join(', ')}]`;
  if (typeof value === 'string') return JSON.stringify(value);
  return String(value);
}

/** Reads the documentation of one key from its outermost schema. */
export function keyDoc(section: string, key: string, schema: z.ZodType): ConfigKeyDoc {
  const meta = keyMeta.get(schema);
  const type = meta?.type;
  const description = schema.description;
  if (type === undefined || description === undefined) {
    throw new Error(`config key [${section}].${key} lacks documentation`);
  }
  const def = schema._zod.def;
  let fallback: string | undefined;
  if (def.type === 'default') {
    const value: unknown = (def as z.core.$ZodDefaultDef).defaultValue;
    // An empty table default is "no entries", not a value worth showing.
    if (Array.isArray(value) || typeof value !== 'object') fallback = tomlLiteral(value);
  }
  return { section, key, type, itemType: meta?.itemType, default: fallback, description };
}

/** The documentation of every key of one table, in its order. */
export function sectionDocs(section: string, shape: Record<string, z.ZodType>): ConfigKeyDoc[] {
  return Object.entries(shape).map(([key, schema]) => keyDoc(section, key, schema));
}
