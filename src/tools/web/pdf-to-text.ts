import { extractText, getDocumentProxy } from 'unpdf';

/**
 * PDF bytes → plain text with unpdf (pdf.js). `isEvalSupported: false` keeps pdf.js from compiling
 * fonts' code with `eval`, so a hostile PDF cannot run script in Cadre's process.
 */
export async function pdfToText(bytes: Uint8Array): Promise<{ text: string; pages: number; title?: string }> {
  const pdf = await getDocumentProxy(new Uint8Array(bytes), { isEvalSupported: false });
  try {
    const { totalPages, text } = await extractText(pdf, { mergePages: true });
    const metadata = await pdf.getMetadata().catch(() => undefined);
    const title = (metadata?.info as { Title?: unknown } | undefined)?.Title;
    return {
      text: text.replace(/[ \t]+\n/g, '\n').trim(),
      pages: totalPages,
      ...(typeof title === 'string' && title.trim() ? { title: title.trim() } : {}),
    };
  } finally {
    await pdf.destroy();
  }
}
