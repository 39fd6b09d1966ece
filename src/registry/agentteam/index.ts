export { taskList } from './list';
export { taskGet } from './get';
export { taskCreate } from './create';
export { taskUpdate } from './update';
export { taskSetClaim } from './claim';
export { taskCheckpoint } from './checkpoint';
export { taskDelete } from './delete';
