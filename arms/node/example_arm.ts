/**
 * `node-openai`: the example TypeScript arm, a `bare` arm written against the official `openai`
 * npm SDK. One streamed chat call per turn with the conversation so far (the last WINDOW
 * messages), no memory beyond it. A memory benchmark's history (seam v2 ingestion) joins the
 * conversation as it was said, so its last WINDOW messages are what the arm remembers.
 *
 * The SDK finds the proxy by itself: OPENAI_BASE_URL and OPENAI_API_KEY (a placeholder) come
 * from the environment the harness gives every arm. Every call says its purpose in
 * X-Harness-Purpose, so the proxy attributes it without guessing.
 *
 *     node dist/example_arm.js        # SEAM_HOST / SEAM_PORT, ARM_MODEL, ARM_MAX_TOKENS
 */

import OpenAI from "openai";
import { Arm, Ingest, OpenSession, Turn, serve } from "./seam";

const WINDOW = 60;
const DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
const MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August",
  "September", "October", "November", "December"];

type Message = { role: "user" | "assistant"; content: string };

/** The date line of arms/chat.py's system prompt, from the seam's pinned clock (never the
 * process's clock, so two runs of a script send the same bytes), spelt out by hand: locale
 * formatting depends on the ICU data a Node build carries. */
export function systemPrompt(clock: string, context: string | null): string {
  const at = new Date(/[zZ]|[+-]\d\d:?\d\d$/.test(clock) ? clock : `${clock}Z`);
  const day = String(at.getUTCDate()).padStart(2, "0");
  const date = `${DAYS[at.getUTCDay()]}, ${day} ${MONTHS[at.getUTCMonth()]} ${at.getUTCFullYear()}`;
  const parts = ["You are a helpful assistant in a long-running conversation.", `Today's date is ${date}.`];
  if (context) parts.push(`Background for this conversation:\n${context}`);
  return parts.join("\n\n");
}

/** Another arm's turn context (a coupled study's `addon_from`) placed after the system text, as a
 * system prompt of the turn, never in the user message; "" (nothing handed) leaves it as it is.
 * arms/chat.py's `with_turn_context`, byte for byte. */
export function withTurnContext(system: string, handed: string): string {
  return handed ? `${system}\n\n${handed}` : system;
}

class NodeOpenAIArm extends Arm {
  readonly name = "node-openai";
  private readonly client = new OpenAI();
  private readonly model = process.env.ARM_MODEL || "gpt-4.1-mini";
  private readonly maxTokens = Number(process.env.ARM_MAX_TOKENS || "1024");
  private readonly window = Number(process.env.ARM_WINDOW || WINDOW);
  private readonly conversations = new Map<string, { opened: OpenSession; messages: Message[] }>();

  async openSession(session: OpenSession): Promise<void> {
    this.conversations.set(session.session_id, { opened: session, messages: [] });
  }

  async ingest(sessionId: string, ingest: Ingest): Promise<number> {
    const conversation = this.conversations.get(sessionId)!;
    for (const m of ingest.messages) {
      conversation.messages.push({ role: m.role, content: m.speaker ? `${m.speaker}: ${m.content}` : m.content });
    }
    return ingest.messages.length;
  }

  async *turn(sessionId: string, turn: Turn): AsyncIterable<string> {
    const conversation = this.conversations.get(sessionId)!;
    conversation.messages.push({ role: "user", content: turn.userMessage() });
    const parts: string[] = [];
    try {
      const stream = await this.client.chat.completions.create(
        {
          model: this.model,
          messages: [
            { role: "system", content: withTurnContext(systemPrompt(turn.clock, conversation.opened.context), turn.systemAddon()) },
            ...conversation.messages.slice(-this.window),
          ],
          max_completion_tokens: this.maxTokens,
          stream: true,
        },
        { headers: { "X-Harness-Purpose": "main" }, signal: turn.signal },
      );
      for await (const chunk of stream) {
        const text = chunk.choices[0]?.delta?.content;
        if (text) {
          parts.push(text);
          yield text;
        }
      }
    } finally {
      // A cut turn still happened: the next turn sees what the user was shown.
      if (parts.length) conversation.messages.push({ role: "assistant", content: parts.join("") });
    }
  }

  async closeSession(sessionId: string): Promise<void> {
    this.conversations.delete(sessionId);
  }
}

if (require.main === module) serve(new NodeOpenAIArm());
