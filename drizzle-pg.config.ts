// drizzle-kit's config for the PostgreSQL schema (drizzle.config.ts is SQLite's): `npm run
// db:generate` writes both migration folders. Generating needs no database.
import { defineConfig } from 'drizzle-kit';

export default defineConfig({
  dialect: 'postgresql',
  schema: './src/queue/pg/schema.ts',
  out: './drizzle-pg',
});
