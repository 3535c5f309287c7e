/**
 * Migrations 19–22 are reserved for work landing in parallel (other branches); on this branch they
 * are empty steps so the list stays dense (migrations.ts) under eventing's 23. Drop this file when
 * the real 19–22 land.
 */
import type { Migration } from '../../migrations.js';

export const POSTGRES_MIGRATIONS_019_022_RESERVED: readonly Migration[] = [19, 20, 21, 22].map((version) => ({ version, name: `reserved_${version}`, async up() {} }));
