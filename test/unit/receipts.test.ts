import { CALL_RECEIPT_MS, Receipts, UPDATE_RECEIPT_MS, type ReceiptData } from '../../workflows/receipts';

describe('an agent’s receipts', () => {
  it('answers a key while its receipt is good, each kind for its own time', () => {
    const data: ReceiptData = { entries: [] };
    const r = new Receipts(data);
    r.keep('update:u1', { plan_id: 'pl_1' }, 1_000, UPDATE_RECEIPT_MS);
    r.keep('create_team:k1', { team_id: 'tm_1' }, 1_000, CALL_RECEIPT_MS);
    expect(r.find('update:u1', 1_000 + UPDATE_RECEIPT_MS)).toEqual({ answer: { plan_id: 'pl_1' } });
    expect(r.find('update:u1', 1_001 + UPDATE_RECEIPT_MS)).toBeUndefined();
    expect(r.find('create_team:k1', 1_000 + CALL_RECEIPT_MS)).toEqual({ answer: { team_id: 'tm_1' } });
    expect(r.find('create_team:k1', 1_001 + CALL_RECEIPT_MS)).toBeUndefined();
    // An answer of undefined is still an answer kept.
    r.keep('update:u2', undefined, 2_000, UPDATE_RECEIPT_MS);
    expect(r.find('update:u2', 2_000)).toEqual({ answer: undefined });
  });

  it('drops expired receipts when it keeps one, and keeps a key once', () => {
    const data: ReceiptData = { entries: [] };
    const r = new Receipts(data);
    r.keep('update:old', 1, 0, UPDATE_RECEIPT_MS);
    r.keep('create_team:k', 1, 0, CALL_RECEIPT_MS);
    r.keep('create_team:k', 2, UPDATE_RECEIPT_MS + 1, CALL_RECEIPT_MS);
    expect(data.entries.map((e) => [e.key, e.answer])).toEqual([['create_team:k', 2]]);
  });

  it('holds what continue-as-new carries to its bounds: oldest first out, an answer too large left out', () => {
    const data: ReceiptData = { entries: [] };
    const r = new Receipts(data);
    for (let i = 0; i < 300; i++) r.keep(`update:${i}`, i, i, CALL_RECEIPT_MS);
    expect(data.entries).toHaveLength(256);
    expect(r.find('update:43', 300)).toBeUndefined();
    expect(r.find('update:44', 300)).toEqual({ answer: 44 });
    const big = 'x'.repeat(100 * 1024);
    r.keep('create_team:a', big, 400, CALL_RECEIPT_MS);
    r.keep('create_team:b', big, 401, CALL_RECEIPT_MS);
    // Two answers of 100 K characters do not fit in 192 K: the older goes.
    expect([r.find('create_team:a', 402), r.find('create_team:b', 402)?.answer]).toEqual([undefined, big]);
    expect(data.entries.reduce((n, e) => n + JSON.stringify(e.answer).length, 0)).toBeLessThanOrEqual(192 * 1024);
    r.keep('create_team:c', 'y'.repeat(200 * 1024), 403, CALL_RECEIPT_MS);
    expect(r.find('create_team:c', 403)).toBeUndefined();
    expect(r.find('create_team:b', 403)).toBeDefined();
  });
});
