import { InterceptingCall, type Interceptor } from '@grpc/grpc-js';
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
  readonly operations: Counter<'operation'>;
  readonly operationFailures: Counter<'operation'>;
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
    // One per typed operation of src/temporal: what each kind of call costs, whatever RPCs it makes.
    this.operations = new Counter({
      name: 'dipper_temporal_operations_total',
      help: 'Typed Temporal operations this process made (src/temporal), by operation.',
      labelNames: ['operation'],
      registers: [this.registry],
    });
    this.operationFailures = new Counter({
      name: 'dipper_temporal_operation_failures_total',
      help: 'Typed Temporal operations that failed, by operation.',
      labelNames: ['operation'],
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

  /** Counts each RPC attempt by method; src/temporal puts it after Temporal's own retries, so each attempt counts. */
  rpcCounter(): Interceptor {
    return (options, nextCall) => {
      const path = options.method_definition.path;
      this.temporalCalls.inc({ method: path.slice(path.lastIndexOf('/') + 1) });
      return new InterceptingCall(nextCall(options));
    };
  }

  async text(): Promise<string> {
    return this.registry.metrics();
  }
}
