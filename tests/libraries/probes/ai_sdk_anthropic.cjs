/**
 * The Vercel AI SDK's Anthropic provider with a tool, `tool_choice` unset, pointed at the proxy
 * by nothing but ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY as `harness proxy serve` prints them.
 * The provider expects /v1 inside that URL and posts `${ANTHROPIC_BASE_URL}/messages`, which the
 * proxy serves as /v1/messages. Prints the steps' tool calls and the final text as JSON.
 *
 *     AI_SDK_DIR=.cache/ai-sdk node ai_sdk_anthropic.cjs
 */
"use strict";
const path = require("node:path");
const { createRequire } = require("node:module");

const lib = createRequire(path.join(process.env.AI_SDK_DIR, "package.json"));
const { generateText, stepCountIs, tool } = lib("ai");
const { anthropic } = lib("@ai-sdk/anthropic");
const { z } = lib("zod");

async function main() {
  const result = await generateText({
    model: anthropic("claude-haiku-4-5"),
    prompt: "What is the weather in Lisbon right now?",
    tools: {
      getWeather: tool({
        description: "Get the current weather for a city.",
        inputSchema: z.object({ city: z.string() }),
        execute: async ({ city }) => `Sunny and 21 C in ${city}`,
      }),
    },
    stopWhen: stepCountIs(5),
    maxRetries: 0,
  });
  const calls = result.steps.flatMap((step) => step.toolCalls.map((c) => [c.toolName, c.input]));
  console.log(JSON.stringify({ calls, text: result.text, steps: result.steps.length }));
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
