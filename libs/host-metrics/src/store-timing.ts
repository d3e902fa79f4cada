import type { Histogram } from 'prom-client';

/**
 * The store as it is, with each call that answers a promise timed into `histogram` under its store name,
 * method name and result. Synchronous methods and other properties pass through untouched; methods are
 * called on the store itself, so its private state works as before.
 */
export function timeStore<T extends object>(store: T, name: string, histogram: Histogram<'store' | 'operation' | 'result'>): T {
  const wrapped = new Map<PropertyKey, (...args: unknown[]) => unknown>();
  return new Proxy(store, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function' || typeof property !== 'string' || property === 'constructor') return value;
      let timed = wrapped.get(property);
      if (!timed) {
        const method = value as (...args: unknown[]) => unknown;
        timed = (...args: unknown[]) => {
          const started = performance.now();
          const answer = method.apply(target, args);
          if (!(answer instanceof Promise)) return answer;
          const observe = (result: 'ok' | 'error') =>
            histogram.observe({ store: name, operation: property, result }, (performance.now() - started) / 1000);
          return answer.then(
            (v: unknown) => {
              observe('ok');
              return v;
            },
            (e: unknown) => {
              observe('error');
              throw e;
            },
          );
        };
        wrapped.set(property, timed);
      }
      return timed;
    },
  });
}
