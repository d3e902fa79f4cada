import zh from './zh-CN.json';

/** The Chinese texts (Simplified Chinese, for operators in mainland China). */
const CHINESE: { [key: string]: unknown } = zh;
export default CHINESE;
