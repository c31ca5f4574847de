/**
 * A Vercel AI SDK arm: `generateText` with two tools and `tool_choice` left unset, the loop the
 * SDK's docs show (`stopWhen: stepCountIs(5)`), on the default `openai` provider (the Responses
 * API), which finds the proxy by OPENAI_BASE_URL and OPENAI_API_KEY from the arm's environment.
 *
 * Run by tests/libraries/test_agent_loops.py as `node ai_sdk_arm.cjs` with AI_SDK_DIR (where
 * scripts/library-venvs installed the npm packages) and SEAM_JS (the compiled TypeScript seam,
 * arms/node/seam.ts). CommonJS, so both are required from where they live.
 */
"use strict";
const path = require("node:path");
const { createRequire } = require("node:module");

const lib = createRequire(path.join(process.env.AI_SDK_DIR, "package.json"));
const { generateText, stepCountIs, tool } = lib("ai");
const { openai } = lib("@ai-sdk/openai");
const { z } = lib("zod");
const { Arm, serve } = require(process.env.SEAM_JS);

// What the tools answer: fixed, so a reply that uses a result is recognisable.
const WEATHER = "Sunny and 21 C";
const RATE = 1.08;

const tools = {
  getWeather: tool({
    description: "Get the current weather for a city.",
    inputSchema: z.object({ city: z.string().describe("The city") }),
    execute: async ({ city }) => `${WEATHER} in ${city}`,
  }),
  convertCurrency: tool({
    description: "Convert an amount of money from one currency to another.",
    inputSchema: z.object({
      amount: z.number(),
      fromCurrency: z.string(),
      toCurrency: z.string(),
    }),
    execute: async ({ amount, fromCurrency, toCurrency }) =>
      `${amount} ${fromCurrency} is ${(amount * RATE).toFixed(2)} ${toCurrency}`,
  }),
};

class AiSdkArm extends Arm {
  name = "ai-sdk";
  history = new Map();

  async openSession(session) {
    this.history.set(session.session_id, []);
  }

  async *turn(sessionId, turn) {
    const messages = [...this.history.get(sessionId), { role: "user", content: turn.userMessage() }];
    const result = await generateText({
      model: openai(process.env.ARM_MODEL || "gpt-4.1-mini"),
      system: "You are a helpful assistant. Use your tools when they help.",
      messages,
      tools,
      stopWhen: stepCountIs(5),
      abortSignal: turn.signal,
    });
    this.history.set(sessionId, [...messages, ...result.response.messages]);
    yield result.text;
  }
}

serve(new AiSdkArm());
