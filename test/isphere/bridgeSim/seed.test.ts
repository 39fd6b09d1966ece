import { createHash } from 'node:crypto';
import { defaultSeed } from '../../../src/isphere/bridgeSim';

describe('isphere bridge simulator: the default seed', () => {
  const seed = defaultSeed();

  it('is the same on every call, bytes included', () => {
    // Bytes compared by digest: jest's deep equality walks a 2 MiB buffer one byte at a time.
    const digested = (s: ReturnType<typeof defaultSeed>) => ({ ...s, files: s.files.map((f) => ({ ...f, bytes: createHash('sha256').update(f.bytes).digest('hex') })) });
    expect(digested(defaultSeed())).toEqual(digested(seed));
  });

  it.each([
    ['contacts', seed.contacts.map((c) => c.contact_id), /^c_\d{4}$/, 30],
    ['groups', seed.groups.map((g) => g.group_id), /^g_\d{4}$/, 8],
    ['conversations', seed.conversations.map((c) => c.conversation_id), /^conv_[dgs]_\d{4}$/, 19],
    ['messages', seed.messages.map((m) => m.message_id), /^m_\d{6}$/, 299],
    ['files', seed.files.map((f) => f.file_id), /^f_\d{4}$/, 21],
  ])('has %s with stable, distinct ids', (_name, list, pattern, count) => {
    expect(list).toHaveLength(count);
    expect(new Set(list).size).toBe(count);
    expect(list.every((id) => pattern.test(id))).toBe(true);
  });

  it('has the awkward cases a connector must handle', () => {
    const named = (name: string) => seed.contacts.filter((c) => c.display_name === name);
    expect(named('Li Wei').map((c) => c.department)).toEqual(['Finance', 'R&D']);
    expect(named('Zhang Wei').map((c) => c.active)).toEqual([true, false]);
    expect(seed.contacts.filter((c) => !c.active)).toHaveLength(4);
    expect(seed.contacts.some((c) => /\p{Script=Han}/u.test(c.display_name))).toBe(true);
    expect(seed.groups.filter((g) => g.archived).map((g) => g.display_name)).toEqual(['Office Move 2025']);
    expect(seed.conversations.filter((c) => c.conversation_type === 'system')).toHaveLength(1);
    expect(Math.max(...seed.files.map((f) => f.bytes.length))).toBe(2 * 1024 * 1024);
  });

  it('numbers messages in time order and spreads them over a month', () => {
    const times = seed.messages.map((m) => Date.parse(m.created_at));
    expect(times.every((t, i) => i === 0 || times[i - 1] <= t)).toBe(true);
    expect(times[times.length - 1] - times[0]).toBeGreaterThan(25 * 86_400_000);
    expect(seed.messages.every((m) => m.received_at >= m.created_at)).toBe(true);
  });
});
