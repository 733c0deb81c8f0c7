/** Each line of `text` outside fenced code blocks, with inline code blanked; fenced lines are empty. */
export function proseLines(text: string): string[];
/** The anchors GitHub makes from the headings of `text`. */
export function headingAnchors(text: string): Set<string>;
