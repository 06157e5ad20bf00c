import type { CadreEvent, EventBus } from '../../core/events.ts';

/** Tracing that is on: flush before exiting so the last spans are not lost. */
export interface Tracing {
  flush(): Promise<void>;
  shutdown(): Promise<void>;
}

/**
 * Exports traces over OTLP/HTTP when `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` or `OTEL_EXPORTER_OTLP_ENDPOINT`
 * is set (and `OTEL_SDK_DISABLED` is not `true`). Otherwise it returns undefined having loaded nothing and
 * subscribed nothing, so tracing off costs nothing. The SDK loads in the background; events published
 * meanwhile are kept and replayed, so the first run's spans are complete.
 */
export function startTracing(
  env: Record<string, string | undefined>,
  bus: EventBus,
  version: string,
): Tracing | undefined {
  const url = tracesUrl(env);
  if (!url || env.OTEL_SDK_DISABLED?.toLowerCase() === 'true') return undefined;
  let early: CadreEvent[] | undefined = [];
  let forward: ((event: CadreEvent) => void) | undefined;
  const unsubscribe = bus.subscribe((event) => {
    if (forward) forward(event);
    else early?.push(event);
  });
  const loaded = import('./otlp-tracing.ts').then(({ createOtlpTracing }) => {
    const tracing = createOtlpTracing({
      url,
      headers: parseHeaders(env.OTEL_EXPORTER_OTLP_TRACES_HEADERS ?? env.OTEL_EXPORTER_OTLP_HEADERS),
      serviceName: env.OTEL_SERVICE_NAME || 'cadre',
      version,
    });
    for (const event of early ?? []) tracing.listener(event);
    early = undefined;
    forward = tracing.listener;
    return tracing;
  });
  return {
    flush: async () => (await loaded).flush(),
    shutdown: async () => {
      unsubscribe();
      await (await loaded).shutdown();
    },
  };
}

/** The traces endpoint: the signal-specific variable as given, or the base with `/v1/traces` added. */
export function tracesUrl(env: Record<string, string | undefined>): string | undefined {
  const specific = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  if (specific) return specific;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  if (!base) return undefined;
  return `${base.replace(/\/+$/, '')}/v1/traces`;
}

/** `key=value,key2=value2` (values URL-encoded), as the OTLP exporter specification writes headers. */
function parseHeaders(text: string | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const pair of (text ?? '').split(',')) {
    const equals = pair.indexOf('=');
    if (equals < 1) continue;
    headers[decodeURIComponent(pair.slice(0, equals).trim())] = decodeURIComponent(
      pair.slice(equals + 1).trim(),
    );
  }
  return headers;
}
