import { ROOT_CONTEXT, SpanStatusCode, trace } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import type { EventListener } from '../../core/events.ts';
import { EventSpans } from './event-spans.ts';

/** Where and how spans are exported, read from the standard OTEL_* variables. */
export interface OtlpSettings {
  url: string;
  headers: Record<string, string>;
  serviceName: string;
  version: string;
}

/**
 * The OpenTelemetry SDK, loaded only when an endpoint is configured: a tracer provider exporting over
 * OTLP/HTTP (JSON) in batches, and the event listener that turns Cadre's events into its spans.
 */
export function createOtlpTracing(settings: OtlpSettings): {
  listener: EventListener;
  shutdown: () => Promise<void>;
  flush: () => Promise<void>;
} {
  const provider = new TracerProvider({
    resource: resourceFromAttributes({
      'service.name': settings.serviceName,
      'service.version': settings.version,
    }),
    spanProcessors: [
      new BatchSpanProcessor({
        exporter: new OTLPTraceExporter({ url: settings.url, headers: settings.headers }),
        scheduledDelayMillis: 1000,
      }),
    ],
  });
  const spans = new EventSpans(provider.getTracer('cadre', settings.version), {
    rootContext: ROOT_CONTEXT,
    withSpan: (parent) => trace.setSpan(ROOT_CONTEXT, parent),
    statusCodes: { OK: SpanStatusCode.OK, ERROR: SpanStatusCode.ERROR },
  });
  return {
    listener: (event) => spans.apply(event),
    flush: () => provider.forceFlush(),
    shutdown: () => provider.shutdown(),
  };
}
