/**
 * The recalled memories in a TypeScript memory arm's answer prompt, in the layout the audit
 * counts: the twin of arms/recall.py, which the harness's audit (harness/checks/audit/parity.py)
 * reads in the captured requests to check a study's `[parity] top_k`.
 *
 *     What you remember about this user from earlier in the conversation (top_k=5):
 *     [memory 1]
 *     I moved to Lisbon in October.
 *     [memory 2]
 *     ...
 *
 * A memory's own text cannot add to the count: a line of it that looks like a marker is indented
 * by one space, and `(top_k=` inside it is written `(top_k =`. Nothing recalled, no section.
 * The output is byte for byte what arms/recall.py writes (tests/arms/test_node_recall.py).
 */

// Python's `^` under re.MULTILINE starts a line after "\n" only (JS's `m` flag also after "\r",
// U+2028 and U+2029), and its `\d` is any Unicode decimal digit (JS's is ASCII): the audit
// counts "[memory ٣]" as a marker, so it is escaped here as there.
const LOOKS_LIKE_MARKER = /(?<![^\n])\[memory \p{Nd}+\]/gu;

function escaped(memory: string): string {
  return memory.replace(LOOKS_LIKE_MARKER, " $&").split("(top_k=").join("(top_k =");
}

/** The section of the system text that shows `memories`, recalled under `topK`. */
export function recallSection(title: string, memories: string[], topK: number): string {
  if (memories.length === 0) return "";
  const shown = memories.map((memory, i) => `[memory ${i + 1}]\n${escaped(memory)}`).join("\n");
  return `${title} (top_k=${topK}):\n${shown}`;
}
