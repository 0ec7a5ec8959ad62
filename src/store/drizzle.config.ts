import { defineConfig } from 'drizzle-kit';

// Paths are relative to the directory npm runs scripts in: the package root.
export default defineConfig({
  dialect: 'postgresql',
  schema: './src/store/schema.ts',
  out: './migrations',
});
