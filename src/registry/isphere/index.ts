export { receiveFiles } from './files';
export { receiveMessages } from './messages';
export { searchContacts, searchGroups } from './search';
export { sendFile, sendMessage } from './sends';
