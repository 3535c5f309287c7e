/** Plumbing shared by the store case files: options, skips with reasons, one fresh store per case. */
import { it } from 'node:test';
import type { StoreConfig } from '../../src/store/store.js';
import type { TestStore } from '../helpers/stores.js';

/** A set of cases that cannot apply to a backend, with the reason shown in the report. */
export interface StoreCaseSkip {
  reason: string;
  tests: readonly string[];
}

/** What a backend's test file hands to `runStoreCases`. */
export interface StoreCaseOptions {
  /** backend name; suites are titled `${name}: …` */
  name: string;
  create(overrides?: Partial<StoreConfig>): Promise<TestStore>;
  /** a string skips every case with that reason; a list skips the named cases */
  skip?: string | readonly StoreCaseSkip[];
}

/** Registers `title` as a test that gets a fresh store, disposed afterwards, honouring skips. */
export function caseRunner(options: StoreCaseOptions) {
  const cells = typeof options.skip === 'string' ? [] : (options.skip ?? []);
  return (title: string, body: (h: TestStore) => Promise<void>, overrides?: Partial<StoreConfig>): void => {
    const reason = cells.find((c) => c.tests.includes(title))?.reason;
    it(title, { skip: reason ?? false }, async () => {
      const h = await options.create(overrides);
      try {
        await body(h);
      } finally {
        await h.dispose();
      }
    });
  };
}

/** True when the case named `title` is skipped for this backend. */
export function isSkipped(options: StoreCaseOptions, title: string): boolean {
  if (typeof options.skip === 'string') return true;
  return (options.skip ?? []).some((c) => c.tests.includes(title));
}
