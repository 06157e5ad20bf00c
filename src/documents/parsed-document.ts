/** What a parser hands back: a title when the file names one, and its text page by page (or sheet by sheet). */
export interface ParsedDocument {
  title?: string;
  pages: string[];
}
