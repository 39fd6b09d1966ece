import type { FaultBody } from './inputs';

export type RouteGroup = FaultBody['route'];
export type Fault = Required<Pick<FaultBody, 'route' | 'mode' | 'count'>> & { delay_ms?: number };

/**
 * Misbehaviour planned by a test: at most one fault per route group, worn
 * down by each authenticated request of the group until its count is spent.
 * A new plan for a group replaces the old one.
 */
export class Faults {
  private readonly planned = new Map<RouteGroup, Fault>();

  plan(fault: Fault): void {
    if (fault.count > 0) this.planned.set(fault.route, { ...fault });
    else this.planned.delete(fault.route);
  }

  /** The fault this request meets, if any, counting it as used. */
  take(route: RouteGroup): Fault | null {
    const fault = this.planned.get(route);
    if (!fault) return null;
    if (fault.count <= 1) this.planned.delete(route);
    else this.planned.set(route, { ...fault, count: fault.count - 1 });
    return fault;
  }

  list(): Fault[] {
    return [...this.planned.values()];
  }

  clear(): void {
    this.planned.clear();
  }
}
