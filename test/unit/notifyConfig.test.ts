import { parseNotify, sinksOf } from '../../src/notify/config';

describe('DIPPER_NOTIFY', () => {
  it('takes any of the three sinks, and lists the ones given in a fixed order', () => {
    expect(parseNotify(undefined)).toEqual({});
    const all = parseNotify(
      JSON.stringify({ email: { smtp: 'smtp://127.0.0.1:2525', from: 'd@x.test', to: ['o@x.test'] }, slack: { url: 'https://hooks.example.test/s' }, webhook: { url: 'https://h.example.test/n', secret: 's'.repeat(16) } }),
    );
    expect(sinksOf(all)).toEqual(['webhook', 'slack', 'email']);
    expect(sinksOf(parseNotify('{"slack":{"url":"https://hooks.example.test/s"}}'))).toEqual(['slack']);
  });

  it('is refused at start-up when a webhook would go unsigned or a field is wrong, naming it', () => {
    expect(() => parseNotify('{"webhook":{"url":"https://h.example.test/n"}}')).toThrow(/webhook: a secret/);
    expect(() => parseNotify('{"webhook":{"url":"https://h.example.test/n","secret":"short"}}')).toThrow(/DIPPER_NOTIFY webhook\.secret/);
    expect(() => parseNotify('{"email":{"smtp":"http://mail","from":"d@x.test","to":["o@x.test"]}}')).toThrow(/DIPPER_NOTIFY email\.smtp: an smtp:\/\/ or smtps:\/\/ URL/);
    expect(() => parseNotify('{"slack":{"url":"not a url"}}')).toThrow(/DIPPER_NOTIFY slack\.url/);
    expect(() => parseNotify('{"pager":{}}')).toThrow(/DIPPER_NOTIFY/);
    expect(() => parseNotify('{')).toThrow(/DIPPER_NOTIFY must be JSON/);
  });
});
