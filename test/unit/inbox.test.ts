import fc from 'fast-check';
import { emptyInbox, Inbox } from '../../workflows/agent/inbox';

function filled(n: number): Inbox {
  const inbox = new Inbox(emptyInbox());
  for (let i = 1; i <= n; i++) inbox.push('message', 'ag_sender', `m${i}`, `msg-${i}`, 1000 + i);
  return inbox;
}

const seqs = (items: { seq: number }[]) => items.map((i) => i.seq);

describe('Inbox', () => {
  it('numbers items 1, 2, 3... and keeps what was pushed', () => {
    const inbox = new Inbox(emptyInbox());
    const first = inbox.push('message', 'ag_a', 'hello', 'msg-1', 42);
    const second = inbox.push('system', null, 'notice', 'msg-2', 43);
    expect(first).toEqual({ seq: 1, message_id: 'msg-1', kind: 'message', from: 'ag_a', content: 'hello', ts: 42 });
    expect(second).toMatchObject({ seq: 2, kind: 'system', from: null });
    expect(inbox.pending).toBe(2);
    expect(inbox.data.next_seq).toBe(3);
  });

  it('returns the items after a cursor, at most limit of them', () => {
    const inbox = filled(5);
    expect(seqs(inbox.after(0, 100))).toEqual([1, 2, 3, 4, 5]);
    expect(seqs(inbox.after(2, 100))).toEqual([3, 4, 5]);
    expect(seqs(inbox.after(2, 2))).toEqual([3, 4]);
    expect(inbox.after(5, 100)).toEqual([]);
    expect(inbox.after(99, 100)).toEqual([]);
  });

  it('drops acknowledged items and never returns them again, even for an older cursor', () => {
    const inbox = filled(5);
    expect(seqs(inbox.ack(3))).toEqual([1, 2, 3]);
    expect(inbox.pending).toBe(2);
    expect(inbox.data.acked_through).toBe(3);
    expect(seqs(inbox.after(0, 100))).toEqual([4, 5]);
    expect(seqs(inbox.after(1, 100))).toEqual([4, 5]);
  });

  it('treats acknowledging the past again as a no-op', () => {
    const inbox = filled(4);
    inbox.ack(2);
    expect(inbox.ack(2)).toEqual([]);
    expect(inbox.ack(1)).toEqual([]);
    expect(inbox.ack(0)).toEqual([]);
    expect(inbox.data.acked_through).toBe(2);
    expect(seqs(inbox.after(0, 100))).toEqual([3, 4]);
  });

  it('clamps an acknowledgement beyond the last item, so later items are not lost', () => {
    const inbox = filled(2);
    expect(seqs(inbox.ack(1000))).toEqual([1, 2]);
    expect(inbox.data.acked_through).toBe(2);
    const later = inbox.push('message', 'ag_a', 'later', 'msg-later', 5);
    expect(later.seq).toBe(3);
    expect(seqs(inbox.after(0, 100))).toEqual([3]);
  });

  it('keeps numbering after acknowledgements instead of reusing sequence numbers', () => {
    const inbox = filled(3);
    inbox.ack(3);
    expect(inbox.push('message', 'ag_a', 'x', 'msg-x', 1).seq).toBe(4);
  });

  it('knows the message ids it accepted, including after being rebuilt from its data', () => {
    const inbox = filled(2);
    expect(inbox.has('msg-1')).toBe(true);
    expect(inbox.has('msg-3')).toBe(false);
    inbox.ack(2);
    // A retried delivery after acknowledgement is still recognised.
    expect(inbox.has('msg-1')).toBe(true);
    const restored = new Inbox(JSON.parse(JSON.stringify(inbox.data)));
    expect(restored.has('msg-2')).toBe(true);
    expect(restored.push('message', 'ag_a', 'x', 'msg-3', 1).seq).toBe(3);
  });

  it('forgets the oldest ids after 4096, in memory and in its data', () => {
    const inbox = new Inbox(emptyInbox());
    for (let i = 0; i < 4097; i++) {
      inbox.push('message', 'ag_a', '', `id-${i}`, i);
      inbox.ack(i + 1);
    }
    expect(inbox.has('id-0')).toBe(false);
    expect(inbox.has('id-1')).toBe(true);
    expect(inbox.has('id-4096')).toBe(true);
    expect(inbox.data.recent_ids).toHaveLength(4096);
    expect(new Inbox(inbox.data).has('id-0')).toBe(false);
  });

  it("keeps a keyed message's fingerprint as long as its id, and no longer", () => {
    const inbox = new Inbox(emptyInbox());
    inbox.push('message', 'ag_a', 'first', 'keyed-0', 0, 'fp-0');
    for (let i = 1; i < 4096; i++) inbox.push('message', 'ag_a', '', `id-${i}`, i);
    expect(new Inbox(inbox.data).fingerprintOf('keyed-0')).toBe('fp-0');
    expect(inbox.fingerprintOf('id-1')).toBeUndefined();
    inbox.push('message', 'ag_a', '', 'id-4096', 4096);
    expect(inbox.has('keyed-0')).toBe(false);
    expect(inbox.fingerprintOf('keyed-0')).toBeUndefined();
    expect(inbox.data.keyed).toEqual({});
  });

  it('checks the words of the newest 1,024 keyed messages only, and still knows every remembered id', () => {
    const inbox = new Inbox(emptyInbox());
    for (let i = 0; i < 1025; i++) inbox.push('message', 'ag_a', '', `keyed-${i}`, i, `fp-${i}`);
    expect(Object.keys(inbox.data.keyed ?? {})).toHaveLength(1024);
    expect(inbox.fingerprintOf('keyed-0')).toBeUndefined();
    expect(inbox.has('keyed-0')).toBe(true);
    expect(new Inbox(inbox.data).fingerprintOf('keyed-1024')).toBe('fp-1024');
  });
});

describe('Inbox under random pushes and acknowledgements', () => {
  type Op = { kind: 'push' } | { kind: 'ack'; upTo: number } | { kind: 'read'; cursor: number; limit: number };
  const op = fc.oneof(
    fc.constant<Op>({ kind: 'push' }),
    fc.record({ kind: fc.constant('ack' as const), upTo: fc.nat({ max: 60 }) }),
    fc.record({ kind: fc.constant('read' as const), cursor: fc.nat({ max: 60 }), limit: fc.integer({ min: 1, max: 10 }) }),
  );

  it('delivers every item once in order, and never an acknowledged one', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 80 }), (ops) => {
        const inbox = new Inbox(emptyInbox());
        const acked = new Set<number>();
        let pushed = 0;
        for (const o of ops) {
          if (o.kind === 'push') {
            pushed++;
            expect(inbox.push('message', 'ag_a', `c${pushed}`, `m${pushed}`, pushed).seq).toBe(pushed);
          } else if (o.kind === 'ack') {
            const before = inbox.data.acked_through;
            const dropped = seqs(inbox.ack(o.upTo));
            for (const s of dropped) {
              expect(acked.has(s)).toBe(false);
              acked.add(s);
            }
            expect(inbox.data.acked_through).toBe(Math.max(before, Math.min(o.upTo, pushed)));
          } else {
            const read = seqs(inbox.after(o.cursor, o.limit));
            expect(read.length).toBeLessThanOrEqual(o.limit);
            for (const s of read) {
              expect(acked.has(s)).toBe(false);
              expect(s).toBeGreaterThan(o.cursor);
            }
            expect(read).toEqual([...read].sort((a, b) => a - b));
          }
        }
        expect(inbox.pending).toBe(pushed - acked.size);
        expect(seqs(inbox.after(0, 1000))).toEqual(
          Array.from({ length: pushed }, (_, i) => i + 1).filter((s) => !acked.has(s)),
        );
      }),
      { numRuns: 300 },
    );
  });
});
