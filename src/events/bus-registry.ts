/**
 * The bus of a store, for write paths that run inside a store transaction but far from the request
 * context (gRPC ingest's group commit): they record their events in that transaction through it.
 * The composition root registers the bus once; without one (a test that drives a store directly),
 * those paths write no event.
 */
import type { Store } from '../store/store.js';
import type { EventBus } from './bus.js';

const buses = new WeakMap<Store, EventBus>();

export function registerBus(store: Store, bus: EventBus): void {
  buses.set(store, bus);
}

export function busOf(store: Store): EventBus | undefined {
  return buses.get(store);
}
