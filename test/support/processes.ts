export { projectRoot, startProcess, waitForHttp, type DipperProcess } from '../../src/devstack/dipperProcess';
