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
    const counter = <L extends string>(name: string, help: string, label: L) => new Counter<L>({ name, help, labelNames: [label], registers: [this.registry] });
    this.temporalCalls = counter('dipper_temporal_requests_total', 'Calls this process made to the Temporal frontend, each attempt counted, by RPC method.', 'method');
    this.queries = counter('dipper_workflow_queries_total', 'Workflow Queries this gateway asked, by Query (inbox: what long polls cost).', 'query');
    // One per typed operation of src/temporal: what each kind of call costs, whatever RPCs it makes.
    this.operations = counter('dipper_temporal_operations_total', 'Typed Temporal operations this process made (src/temporal), by operation.', 'operation');
    this.operationFailures = counter('dipper_temporal_operation_failures_total', 'Typed Temporal operations that failed, by operation.', 'operation');
    // Section 11.3: a deprecated tool's use is counted, so its removal gate can be read off this figure.
    this.deprecatedCalls = counter('dipper_deprecated_tool_calls_total', 'Calls of deprecated tools this gateway served, by tool.', 'tool');
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
