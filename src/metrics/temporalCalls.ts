import { InterceptingCall, type Interceptor } from '@grpc/grpc-js';
import { defaultGrpcRetryOptions, makeGrpcRetryInterceptor } from '@temporalio/client';
import { Counter, Registry } from 'prom-client';

/**
 * A process's Prometheus registry and the count of what it asks Temporal,
 * by RPC method (`QueryWorkflow`, `UpdateWorkflowExecution`, …): the figure
 * that says what idle agents cost.
 */
export class ProcessMetrics {
  readonly registry = new Registry();
  readonly temporalCalls: Counter<'method'>;
  readonly queries: Counter<'query'>;
  readonly deprecatedCalls: Counter<'tool'>;

  constructor(process: string) {
    this.registry.setDefaultLabels({ process });
    this.temporalCalls = new Counter({
      name: 'dipper_temporal_requests_total',
      help: 'Calls this process made to the Temporal frontend, each attempt counted, by RPC method.',
      labelNames: ['method'],
      registers: [this.registry],
    });
    this.queries = new Counter({
      name: 'dipper_workflow_queries_total',
      help: 'Workflow Queries this gateway asked, by Query (inbox: what long polls cost).',
      labelNames: ['query'],
      registers: [this.registry],
    });
    // Section 11.3: a deprecated tool's use is counted, so its removal gate can be read off this figure.
    this.deprecatedCalls = new Counter({
      name: 'dipper_deprecated_tool_calls_total',
      help: 'Calls of deprecated tools this gateway served, by tool.',
      labelNames: ['tool'],
      registers: [this.registry],
    });
  }

  /** The client connection's interceptors: Temporal's own retries, then the count (so each attempt counts). */
  temporalInterceptors(): Interceptor[] {
    const count: Interceptor = (options, nextCall) => {
      const path = options.method_definition.path;
      this.temporalCalls.inc({ method: path.slice(path.lastIndexOf('/') + 1) });
      return new InterceptingCall(nextCall(options));
    };
    return [makeGrpcRetryInterceptor(defaultGrpcRetryOptions()), count];
  }

  async text(): Promise<string> {
    return this.registry.metrics();
  }
}
