/** A session's title from its first question: the first 80 characters, never ending in half an emoji. */
export function sessionTitle(text: string): string {
  const title = text.slice(0, 80);
  return /[\uD800-\uDBFF]$/.test(title) ? title.slice(0, -1) : title;
}
