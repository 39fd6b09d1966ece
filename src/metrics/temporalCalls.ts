import { InterceptingCall, type Interceptor } from '@grpc/grpc-js';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';

/** Seconds: a cheap read is milliseconds, a call that waits for a workflow's Update up to the call timeout (30 s). */
const CALL_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const WRITE_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5];

/**
 * A process's Prometheus registry: what it asks Temporal, the tool calls
 * it serves and how long they take, and what it holds. Labels are kinds
 * (surface, tool, outcome, RPC method), never runs, agents or tokens: the
 * page is served without a token and says nothing about any one run.
 */
export class ProcessMetrics {
  readonly registry = new Registry();
  readonly temporalCalls: Counter<'method'>;
  readonly queries: Counter<'query'>;
  readonly updates: Counter<'update'>;
  readonly operations: Counter<'operation'>;
  readonly operationFailures: Counter<'operation'>;
  readonly deprecatedCalls: Counter<'tool'>;
  readonly toolCalls: Counter<'surface' | 'tool' | 'outcome'>;
  readonly toolSeconds: Histogram<'surface' | 'tool'>;
  readonly writeSeconds: Histogram<'store'>;

  constructor(process: string) {
    this.registry.setDefaultLabels({ process });
    const counter = <L extends string>(name: string, help: string, ...labelNames: L[]) => new Counter<L>({ name, help, labelNames, registers: [this.registry] });
    this.temporalCalls = counter('dipper_temporal_requests_total', 'Calls this process made to the Temporal frontend, each attempt counted, by RPC method.', 'method');
    this.queries = counter('dipper_workflow_queries_total', 'Workflow Queries this gateway asked, by Query (inbox: what long polls cost).', 'query');
    this.updates = counter('dipper_workflow_updates_total', 'Workflow Updates this gateway sent, by Update (spawnOutcome: spawns whose step did not announce their member in time).', 'update');
    // One per typed operation of src/temporal: what each kind of call costs, whatever RPCs it makes.
    this.operations = counter('dipper_temporal_operations_total', 'Typed Temporal operations this process made (src/temporal), by operation.', 'operation');
    this.operationFailures = counter('dipper_temporal_operation_failures_total', 'Typed Temporal operations that failed, by operation.', 'operation');
    // Section 11.3: a deprecated tool's use is counted, so its removal gate can be read off this figure.
    this.deprecatedCalls = counter('dipper_deprecated_tool_calls_total', 'Calls of deprecated tools this gateway served, by tool.', 'tool');
    this.toolCalls = counter('dipper_tool_calls_total', 'Tool calls this gateway answered, by surface, tool and outcome (ok, or the refusal code).', 'surface', 'tool', 'outcome');
    this.toolSeconds = new Histogram({ name: 'dipper_tool_call_seconds', help: 'Time from a tool call to its answer, by surface and tool.', labelNames: ['surface', 'tool'], buckets: CALL_BUCKETS, registers: [this.registry] });
    this.writeSeconds = new Histogram({ name: 'dipper_store_write_seconds', help: 'Time to write to the event log (events) or the iSphere audit chain (audit), per write.', labelNames: ['store'], buckets: WRITE_BUCKETS, registers: [this.registry] });
  }

  /** A figure read when scraped (a count this process holds, or one it asks for); a read that fails leaves the last value. */
  gauge(name: string, help: string, read: () => number | Promise<number>): void {
    new Gauge({
      name,
      help,
      registers: [this.registry],
      async collect() {
        try {
          this.set(await read());
        } catch {
          // Scrapes go on; the figure stays as it was.
        }
      },
    });
  }

  /** A counter with no labels. */
  counter(name: string, help: string): Counter {
    return new Counter({ name, help, registers: [this.registry] });
  }

  /** Times every append of a store (the event log, the audit chain) from now on. */
  timeAppends<A extends unknown[], R>(store: 'events' | 'audit', target: { append: (...args: A) => Promise<R> }): void {
    const append = target.append.bind(target);
    target.append = (...args: A) => this.timedWrite(store, () => append(...args));
  }

  /** One answered tool call. */
  toolCall(surface: string, tool: string, outcome: string, seconds: number): void {
    this.toolCalls.inc({ surface, tool, outcome });
    this.toolSeconds.observe({ surface, tool }, seconds);
  }

  /** Times a write to a store: the promise's own result and failure pass through. */
  async timedWrite<T>(store: 'events' | 'audit', write: () => Promise<T>): Promise<T> {
    const end = this.writeSeconds.startTimer({ store });
    try {
      return await write();
    } finally {
      end();
    }
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
