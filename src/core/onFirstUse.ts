/**
 * A value built the first time it is asked for, then kept. For what a module would otherwise build
 * at import for every process that loads it: the terminal builds, at each start, only the schemas
 * of what its question reads (bench/cli: each zod schema built and kept costs the start its
 * construction and the young collections it causes).
 */
export function onFirstUse<T>(build: () => T): () => T {
  let built: { readonly value: T } | undefined;
  return () => {
    built ??= { value: build() };
    return built.value;
  };
}
