/**
 * The people, groups and words of the default seed. Chosen to be awkward
 * for a connector: three people called Li Wei (two spelled alike, in
 * different departments, one in Chinese), two Zhang Wei of whom one has
 * left, Chinese names and departments, an external contact with no account,
 * groups with nearly the same name, and an archived group.
 */

export const SELF = { account_id: 'c_0000', display_name: 'Gao Yuan' };

/** display_name, account, department, title, active; the nth row is c_000n. */
export const PEOPLE: [string, string | null, string | null, string | null, boolean][] = [
  ['Li Wei', 'li.wei', 'Finance', 'Senior Accountant', true],
  ['Li Wei', 'li.wei2', 'R&D', 'Backend Engineer', true],
  ['Wang Fang', 'wang.fang', 'Human Resources', 'HR Business Partner', true],
  ['Zhang Wei', 'zhang.wei', 'Sales', 'Account Manager', true],
  ['Zhang Wei', 'zhang.wei.old', 'Sales', 'Sales Director', false],
  ['王芳', 'wangfang.sh', '财务部', '会计', true],
  ['张伟', 'zhangwei.bj', '研发部', '测试工程师', true],
  ['刘洋', 'liuyang', '市场部', '市场经理', true],
  ['陈静', 'chenjing', '行政部', '行政助理', false],
  ['Chen Hao', 'chen.hao', 'R&D', 'Engineering Manager', true],
  ['Yang Lin', 'yang.lin', 'Legal', 'Legal Counsel', true],
  ['Huang Lei', 'huang.lei', 'IT', 'IT Support Specialist', true],
  ['Zhao Min', 'zhao.min', 'Procurement', 'Buyer', true],
  ['Wu Xiaoling', 'wu.xiaoling', 'Finance', 'Financial Controller', true],
  ['Xu Jun', 'xu.jun', 'R&D', 'Frontend Engineer', true],
  ['Sun Li', 'sun.li', 'Customer Service', 'Team Lead', true],
  ['Ma Tao', 'ma.tao', 'Operations', 'Operations Manager', true],
  ['Zhu Hong', 'zhu.hong', 'Human Resources', 'Recruiter', true],
  ['Hu Bin', 'hu.bin', 'IT', 'Security Engineer', false],
  ['Guo Qiang', 'guo.qiang', 'Sales', 'Sales Representative', true],
  ['He Yan', 'he.yan', 'Product', 'Product Manager', true],
  ['Lin Na', 'lin.na', 'Product', 'UX Designer', true],
  ['Luo Gang', 'luo.gang', 'Operations', 'Logistics Coordinator', false],
  ['Zheng Hui', 'zheng.hui', 'Finance', 'Treasurer', true],
  ['Liang Ying', 'liang.ying', 'R&D', 'QA Engineer', true],
  ['Song Jie', 'song.jie', 'Legal', 'Paralegal', true],
  ['Xie Ping', 'xie.ping', 'Administration', 'Office Manager', true],
  ['Han Mei', 'han.mei', 'Marketing', 'Content Writer', true],
  ['李伟', 'liwei.sz', '研发部', '架构师', true],
  ['Peter Schmidt', null, null, null, true],
];

export interface GroupPlan {
  name: string;
  owner: number;
  /** Contact numbers besides the logged-in account, who is in every group. */
  members: number[];
  /** When the group is larger than the people in the directory who talk in it. */
  memberCount?: number;
  archived?: boolean;
}

/** The nth row is g_000n, and its conversation conv_g_000n. */
export const GROUPS: GroupPlan[] = [
  { name: 'Finance Team', owner: 14, members: [1, 6, 14, 24] },
  { name: 'Finance Team (Shanghai)', owner: 6, members: [6, 13, 24] },
  { name: 'Project Phoenix', owner: 10, members: [2, 7, 10, 15, 21, 22, 25, 29] },
  { name: 'Project Phoenix Steering', owner: 21, members: [10, 11, 14, 21] },
  { name: 'R&D Backend', owner: 10, members: [2, 7, 10, 15, 25, 29] },
  { name: '全员通知', owner: 27, members: [3, 18, 27], memberCount: 236 },
  { name: 'Office Move 2025', owner: 27, members: [12, 17, 23, 27], archived: true },
  { name: 'Lunch Club', owner: 3, members: [3, 16, 22, 28] },
];

/** The contacts with a direct conversation, in conversation order (conv_d_0001 is with c_0001). */
export const DIRECT_PEERS = [1, 2, 3, 5, 6, 10, 14, 21, 29, 30];

export const ENGLISH = [
  'Can you take a look when you have a minute?',
  'Thanks, that works for me.',
  'I will send the numbers by end of day.',
  'Meeting moved to 3 pm, same room.',
  'Who owns the follow-up on this?',
  'Approved on my side.',
  'Please double-check the totals in row 14.',
  'The build is green again.',
  'Could we push this to next week?',
  'Reminder: the deadline is Friday.',
  'I have updated the ticket with the details.',
  'Let us discuss it in the sync tomorrow.',
  'Sounds good, go ahead.',
  'The customer confirmed the delivery date.',
  'Staging is down for maintenance until noon.',
  'Any objections before I merge?',
  'Noted, I will adjust the plan.',
  'Sorry, I missed that. Can you resend?',
  'The invoice has been paid.',
  'Great work on the release, everyone.',
  'Lunch at 12:30?',
  'I am out of office on Monday.',
  'Do we have a budget code for this?',
  'Please review before the steering meeting.',
  'The vendor sent a revised quote.',
  'Logs attached in the ticket.',
  'Let me check with legal first.',
  'All tests passed on the new branch.',
];

export const CHINESE = [
  '收到，谢谢！',
  '请大家在周五前提交报销单。',
  '下午三点开会，地点不变。',
  '这个问题我来跟进。',
  '好的，没问题。',
  '请帮忙看一下这个数据。',
  '明天上午我请假。',
  '合同已经签好了。',
  '新版本已经上线，请大家测试。',
  '会议纪要已发到邮箱。',
  '辛苦了！',
  '下周一前给我回复即可。',
];

export const RICH = [
  '**Weekly sync**\n- status\n- risks\n- next steps',
  'Decision: go with option B. See the [design doc](https://wiki.example/phoenix/design).',
  '| item | owner |\n| --- | --- |\n| budget | Finance |\n| rollout | R&D |',
  '**周报**\n1. 完成接口联调\n2. 修复三个缺陷',
];

export const UNKNOWN = ['[Unsupported message: vote]', '[Unsupported message: sticker]', '[Unsupported message: location]'];

export const NOTICES = [
  'Your password expires in 7 days.',
  'New sign-in from a Windows client.',
  'Group "Office Move 2025" was archived by its owner.',
  'iSphere 5.2 is available. Restart the client to update.',
  'Your mailbox is almost full.',
  '系统将于周六凌晨 2:00 维护，预计 2 小时。',
  'You were added to the group "Project Phoenix".',
  'A file you shared was opened 5 times.',
];

export interface FilePlan {
  conversation: string;
  name: string;
  mime: string;
  size: number;
  /** The message's text; without one the message says only the file's name. */
  caption?: string;
  /** Attached to the same message as the file before it. */
  withPrevious?: boolean;
  /** A text message sent in the same millisecond, so ordering must fall back on ids. */
  note?: string;
}

const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
const PPTX = 'application/vnd.openxmlformats-officedocument.presentationml.presentation';

export const FILES: FilePlan[] = [
  { conversation: 'conv_g_0001', name: 'Q2-budget-draft.xlsx', mime: XLSX, size: 18_432, caption: 'Q2 budget draft, comments by Friday please' },
  { conversation: 'conv_g_0001', name: 'expense-policy-2026.pdf', mime: 'application/pdf', size: 45_210, caption: 'Updated expense policy' },
  { conversation: 'conv_d_0001', name: 'invoice-INV-20260612.pdf', mime: 'application/pdf', size: 12_000 },
  { conversation: 'conv_d_0002', name: 'api-error-log.txt', mime: 'text/plain', size: 3_000, caption: 'Here is the log from staging' },
  { conversation: 'conv_d_0002', name: 'empty-notes.txt', mime: 'text/plain', size: 0 },
  { conversation: 'conv_g_0003', name: 'phoenix-architecture.png', mime: 'image/png', size: 64_000 },
  { conversation: 'conv_g_0003', name: 'phoenix-roadmap.pptx', mime: PPTX, size: 96_000, caption: 'Roadmap v3' },
  { conversation: 'conv_g_0003', name: 'site-survey-photos.zip', mime: 'application/zip', size: 2 * 1024 * 1024, caption: 'Photos from the site survey' },
  { conversation: 'conv_g_0004', name: 'steering-minutes-0615.docx', mime: DOCX, size: 22_000, caption: 'Minutes from Monday' },
  { conversation: 'conv_g_0005', name: 'load-test-results.csv', mime: 'text/csv', size: 8_000, caption: 'Load test results and the flame graph' },
  { conversation: 'conv_g_0005', name: 'flamegraph.png', mime: 'image/png', size: 30_000, withPrevious: true },
  { conversation: 'conv_g_0005', name: 'schema-migration.sql', mime: 'application/sql', size: 2_400 },
  { conversation: 'conv_g_0006', name: '2026年端午节放假通知.pdf', mime: 'application/pdf', size: 15_000, caption: '端午节放假安排，请查收' },
  { conversation: 'conv_g_0006', name: 'office-wifi-guide.pdf', mime: 'application/pdf', size: 9_000 },
  { conversation: 'conv_g_0007', name: 'floor-plan-3F.png', mime: 'image/png', size: 40_000 },
  { conversation: 'conv_g_0007', name: 'moving-checklist.xlsx', mime: XLSX, size: 11_000 },
  { conversation: 'conv_g_0008', name: 'menu-june.jpg', mime: 'image/jpeg', size: 25_000, caption: "This week's menu" },
  { conversation: 'conv_d_0003', name: 'onboarding-checklist.docx', mime: DOCX, size: 14_000 },
  { conversation: 'conv_d_0005', name: '报销单.xlsx', mime: XLSX, size: 10_000, caption: '报销单请查收' },
  { conversation: 'conv_d_0008', name: 'prd-search-v2.md', mime: 'text/markdown', size: 5_500, note: 'PRD for search v2, see attached' },
  { conversation: 'conv_s_0001', name: 'iSphere-5.2-release-notes.pdf', mime: 'application/pdf', size: 7_000, caption: 'iSphere 5.2 release notes' },
];
