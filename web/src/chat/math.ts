/**
 * LaTeX in answers (`$…$`, `$$…$$`, `\(…\)`, `\[…\]`) drawn with KaTeX: loaded as its own chunk (with its
 * styles and fonts) only once an answer has math, so the first page does not carry it.
 */
import 'katex/dist/katex.min.css';
import rehypeKatex from 'rehype-katex';
import remarkMath from 'remark-math';

export const remarkMathPlugin = remarkMath;
/** Bad LaTeX shows as its source in the error colour instead of breaking the answer. */
export const rehypeMathPlugin = [rehypeKatex, { throwOnError: false, strict: 'ignore' }] as const;
